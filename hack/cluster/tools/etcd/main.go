// Command etcd is the etcd server built from go.etcd.io/etcd/server/v3 at the version pinned in
// hack/cluster/versions.env (the server module ships no main package of its own).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
