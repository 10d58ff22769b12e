module scorch.test/goburn

go 1.19
