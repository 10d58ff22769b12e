module scorch.test/scrapeprog

go 1.19
