module scorch.example/demo

go 1.19
