// Command kubeprobe is what a pod does to prove it reaches the Kubernetes API through the
// `kubernetes` Service with its service-account token: it reads /version and asks the API who
// it is (a SelfSubjectReview, allowed for every authenticated identity), verifying the server
// with the mounted CA. It prints one JSON object and exits non-zero on any failure.
// Standard library only, so the image is one static file.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubeprobe:", err)
		os.Exit(1)
	}
}

func run() error {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return fmt.Errorf("KUBERNETES_SERVICE_HOST/PORT not set")
	}
	token, err := os.ReadFile(saDir + "/token")
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(saDir + "/ca.crt")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no certificate in %s/ca.crt", saDir)
	}
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "kubernetes.default.svc"}},
	}
	base := "https://" + net.JoinHostPort(host, port)
	call := func(method, path, body string) (map[string]any, error) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+string(bytes.TrimSpace(token)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
		}
		var out map[string]any
		return out, json.Unmarshal(data, &out)
	}
	version, err := call(http.MethodGet, "/version", "")
	if err != nil {
		return err
	}
	review, err := call(http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	if err != nil {
		return err
	}
	user := review["status"].(map[string]any)["userInfo"].(map[string]any)["username"]
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"server": base, "gitVersion": version["gitVersion"], "username": user,
	})
}
