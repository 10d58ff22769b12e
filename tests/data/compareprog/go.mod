module compareprog

go 1.19
