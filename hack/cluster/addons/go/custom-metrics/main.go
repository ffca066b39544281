// Command custom-metrics is the test custom-metrics API server of the local cluster: an
// aggregated API (custom.metrics.k8s.io) built on sigs.k8s.io/custom-metrics-apiserver whose
// values are whatever a test last set through a small HTTP endpoint on loopback. It lets
// integration tests drive an HPA on a custom metric (queue length, response time) without a
// monitoring stack: the HPA controller reads exactly the number the test put in.
//
// Control endpoint (--control-address, loopback only):
//
//	PUT    /values/{namespace}/{resource}/{metric}/{name}   body: a quantity ("12", "250m")
//	DELETE /values/{namespace}/{resource}/{metric}/{name}
//	GET    /values                                          all values as JSON
//	GET    /healthz
//
// {resource} is a plural resource ("pods", "services", "ingresses.networking.k8s.io"), {name} an
// object name or "*" for every object of that resource in the namespace (e.g. all pods an HPA
// selects).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider/helpers"
)

// allObjects is the name under which a value applies to every object of a resource.
const allObjects = "*"

type seriesKey struct {
	Namespace string `json:"namespace"`
	Resource  string `json:"resource"`
	Metric    string `json:"metric"`
}

// store holds the values set by tests: series -> object name (or "*") -> value.
type store struct {
	mu     sync.RWMutex
	values map[seriesKey]map[string]resource.Quantity
}

func (s *store) set(k seriesKey, name string, v resource.Quantity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values[k] == nil {
		s.values[k] = map[string]resource.Quantity{}
	}
	s.values[k][name] = v
}

func (s *store) unset(k seriesKey, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values[k], name)
	if len(s.values[k]) == 0 {
		delete(s.values, k)
	}
}

func (s *store) get(k seriesKey, name string) (resource.Quantity, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := s.values[k][name]; ok {
		return v, true
	}
	v, ok := s.values[k][allObjects]
	return v, ok
}

// testProvider answers the custom metrics API from the store.
type testProvider struct {
	store  *store
	mapper apimeta.RESTMapper
	client dynamic.Interface
}

// key normalises the queried resource ("pod", "pods", "Pod") to the plural the tests use.
func (p *testProvider) key(namespace string, info provider.CustomMetricInfo) seriesKey {
	if n, _, err := info.Normalized(p.mapper); err == nil {
		info = n
	}
	return seriesKey{Namespace: namespace, Resource: info.GroupResource.String(), Metric: info.Metric}
}

func (p *testProvider) value(name types.NamespacedName, info provider.CustomMetricInfo, v resource.Quantity) (*custom_metrics.MetricValue, error) {
	ref, err := helpers.ReferenceFor(p.mapper, name, info)
	if err != nil {
		return nil, err
	}
	return &custom_metrics.MetricValue{
		DescribedObject: ref,
		Metric:          custom_metrics.MetricIdentifier{Name: info.Metric},
		Timestamp:       metav1.Now(),
		Value:           v,
	}, nil
}

func (p *testProvider) GetMetricByName(_ context.Context, name types.NamespacedName, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValue, error) {
	v, ok := p.store.get(p.key(name.Namespace, info), name.Name)
	if !ok {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	return p.value(name, info, v)
}

func (p *testProvider) GetMetricBySelector(_ context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
	names, err := helpers.ListObjectNames(p.mapper, p.client, namespace, selector, info)
	if err != nil {
		return nil, err
	}
	k := p.key(namespace, info)
	out := &custom_metrics.MetricValueList{}
	for _, n := range names {
		v, ok := p.store.get(k, n)
		if !ok {
			continue
		}
		mv, err := p.value(types.NamespacedName{Namespace: namespace, Name: n}, info, v)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *mv)
	}
	return out, nil
}

func (p *testProvider) ListAllMetrics() []provider.CustomMetricInfo {
	p.store.mu.RLock()
	defer p.store.mu.RUnlock()
	seen := map[provider.CustomMetricInfo]bool{}
	var out []provider.CustomMetricInfo
	for k := range p.store.values {
		info := provider.CustomMetricInfo{GroupResource: schema.ParseGroupResource(k.Resource), Namespaced: true, Metric: k.Metric}
		if !seen[info] {
			seen[info] = true
			out = append(out, info)
		}
	}
	return out
}

// control serves the loopback endpoint through which tests set values.
func control(s *store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /values", func(w http.ResponseWriter, _ *http.Request) {
		type entry struct {
			seriesKey
			Name  string `json:"name"`
			Value string `json:"value"`
		}
		s.mu.RLock()
		out := []entry{}
		for k, byName := range s.values {
			for n, v := range byName {
				out = append(out, entry{k, n, v.String()})
			}
		}
		s.mu.RUnlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	path := "/values/{namespace}/{resource}/{metric}/{name}"
	keyOf := func(r *http.Request) (seriesKey, string) {
		return seriesKey{Namespace: r.PathValue("namespace"), Resource: r.PathValue("resource"), Metric: r.PathValue("metric")}, r.PathValue("name")
	}
	mux.HandleFunc("PUT "+path, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1024))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(string(body)))
		if err != nil {
			http.Error(w, "body must be a quantity: "+err.Error(), http.StatusBadRequest)
			return
		}
		k, n := keyOf(r)
		s.set(k, n, q)
		klog.InfoS("value set", "namespace", k.Namespace, "resource", k.Resource, "metric", k.Metric, "name", n, "value", q.String())
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE "+path, func(w http.ResponseWriter, r *http.Request) {
		k, n := keyOf(r)
		s.unset(k, n)
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func main() {
	adapter := &basecmd.AdapterBase{Name: "cronscale-test-custom-metrics"}
	controlAddr := adapter.Flags().String("control-address", "127.0.0.1:0", "loopback address of the endpoint tests set values through")
	controlFile := adapter.Flags().String("control-address-file", "", "file to write the bound control address to")
	logs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(logs)
	adapter.Flags().AddGoFlagSet(logs)
	if err := adapter.Flags().Parse(os.Args[1:]); err != nil {
		fail("parsing flags", err)
	}

	mapper, err := adapter.RESTMapper()
	if err != nil {
		fail("building REST mapper", err)
	}
	client, err := adapter.DynamicClient()
	if err != nil {
		fail("building dynamic client", err)
	}
	s := &store{values: map[seriesKey]map[string]resource.Quantity{}}
	adapter.WithCustomMetrics(&testProvider{store: s, mapper: mapper, client: client})

	host, _, err := net.SplitHostPort(*controlAddr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fail("control address", fmt.Errorf("%q is not a loopback address", *controlAddr))
	}
	ln, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		fail("listening for control", err)
	}
	if *controlFile != "" {
		if err := os.WriteFile(*controlFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			fail("writing control address", err)
		}
	}
	srv := &http.Server{Handler: control(s), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	klog.InfoS("control endpoint listening", "address", ln.Addr().String())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := adapter.Run(ctx); err != nil {
		fail("running the API server", err)
	}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "custom-metrics: %s: %v\n", what, err)
	os.Exit(1)
}
