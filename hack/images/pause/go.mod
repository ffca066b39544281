module cronscale.local/hack/images/pause

go 1.26
