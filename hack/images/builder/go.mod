module cronscale.local/hack/images/builder

go 1.26
