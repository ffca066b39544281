// Command builder turns root filesystem directories and a run config into a container image
// archive (OCI layout and docker-archive in one tar), deterministically: the same inputs give
// the same digests, and the image reference's tag is derived from the manifest digest.
//
//	builder -repo cronscale.local/shell -config run.json -layer rootfs [-layer more] -out image.tar
//
// It prints the image reference on stdout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var layers multiFlag
	repo := flag.String("repo", "", "image repository, e.g. cronscale.local/shell")
	configPath := flag.String("config", "", "JSON file with the run config (User, Env, Entrypoint, Cmd, WorkingDir, ...)")
	out := flag.String("out", "", "archive to write")
	compress := flag.Bool("gzip", true, "gzip the layers")
	flag.Var(&layers, "layer", "directory whose contents form one layer (repeat, lowest first)")
	flag.Parse()
	if *repo == "" || *out == "" || len(layers) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ref, err := build(*repo, *configPath, layers, *out, *compress)
	if err != nil {
		fmt.Fprintln(os.Stderr, "builder:", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}

// build is the whole command: layers, config, manifest, archive.
func build(repo, configPath string, dirs []string, out string, compress bool) (string, error) {
	var cfg RunConfig
	if configPath != "" {
		raw, err := os.ReadFile(configPath)
		if err != nil {
			return "", err
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return "", fmt.Errorf("config %s: %w", configPath, err)
		}
	}
	tmpDir, err := os.MkdirTemp(dirOf(out), ".builder-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmpDir)
	var ls []*Layer
	for _, d := range dirs {
		l, err := writeLayer(d, tmpDir, compress)
		if err != nil {
			return "", fmt.Errorf("layer %s: %w", d, err)
		}
		ls = append(ls, l)
	}
	img, err := assemble(repo, ls, cfg, compress)
	if err != nil {
		return "", err
	}
	if err := writeArchive(img, out); err != nil {
		return "", err
	}
	return img.Ref, nil
}

func dirOf(p string) string {
	if i := strings.LastIndex(p, "/"); i > 0 {
		return p[:i]
	}
	return "."
}
