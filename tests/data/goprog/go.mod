module scorch.test/goprog

go 1.19
