module cronscale.local/images/kubeprobe

go 1.26
