module scorch.test/leakprog

go 1.19
