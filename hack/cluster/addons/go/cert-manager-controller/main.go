// Command cert-manager-controller runs cert-manager's own controllers (the packages of the
// github.com/cert-manager/cert-manager module, pinned in go.mod) as one host process.
//
// Why a main of ours: since cert-manager 1.12 its cmd/controller lives in a separate Go module
// that the module proxy does not serve, while the main module with the controller registry
// (pkg/controller) and every controller package is served. The controllers register themselves
// in init(); this program only builds their shared context from a kubeconfig, constructs the
// ones the local cluster needs (certificates, the CertificateRequest approver, the self-signed
// and CA issuers, Issuer/ClusterIssuer readiness, the Ingress shim), starts the informers and
// runs them until SIGTERM. ACME, Vault and Venafi are left out: nothing here can reach them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"k8s.io/klog/v2"

	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to the kubeconfig of the cluster")
	clusterNS := flag.String("cluster-resource-namespace", "cert-manager", "namespace of the Secrets that ClusterIssuers refer to")
	workers := flag.Int("workers", 2, "workers per controller")
	defaultIssuer := flag.String("default-issuer-name", "", "ClusterIssuer used by the Ingress shim when an Ingress names none")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := klog.Background().WithName("cert-manager")
	ctx = logf.NewContext(ctx, log)

	opts := controllerpkg.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: *clusterNS},
		IngressShimOptions: controllerpkg.IngressShimOptions{
			DefaultIssuerName:                 *defaultIssuer,
			DefaultIssuerKind:                 "ClusterIssuer",
			DefaultIssuerGroup:                "cert-manager.io",
			DefaultAutoCertificateAnnotations: []string{"kubernetes.io/tls-acme"},
		},
		CertificateOptions: controllerpkg.CertificateOptions{
			// cert-manager's own defaults (1h .. 32h backoff after a failed request).
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		fail("building controller context", err)
	}

	known := controllerpkg.Known()
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	controllers := make(map[string]controllerpkg.Interface, len(names))
	for _, name := range names {
		c, err := known[name](factory)
		if err != nil {
			fail("constructing controller "+name, err)
		}
		controllers[name] = c
	}

	// Controllers register their informers while being constructed; the informers start after.
	shared, err := factory.Build()
	if err != nil {
		fail("building shared context", err)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	if shared.GatewaySolverEnabled {
		shared.GWShared.Start(ctx.Done())
	}
	log.Info("starting controllers", "controllers", strings.Join(names, ","))

	var wg sync.WaitGroup
	for name, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(*workers, ctx); err != nil {
				log.Error(err, "controller stopped", "controller", name)
				stop()
			}
		}()
	}
	wg.Wait()
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "cert-manager-controller: %s: %v\n", what, err)
	os.Exit(1)
}
