package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeTree writes a small root file system with the kinds of entries packages have.
func makeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "tmp"), 0o755))
	must(os.Chmod(filepath.Join(root, "tmp"), 0o777|os.ModeSticky))
	must(os.WriteFile(filepath.Join(root, "usr/bin/tool"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(os.Link(filepath.Join(root, "usr/bin/tool"), filepath.Join(root, "usr/bin/tool-alias")))
	must(os.Symlink("usr/bin", filepath.Join(root, "bin")))
	must(os.WriteFile(filepath.Join(root, "usr/"+strings.Repeat("long", 40)), []byte("x"), 0o644))
	return root
}

func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
}

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestBuildIsDeterministic(t *testing.T) {
	root := makeTree(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"User":"65532:65532","Cmd":["/bin/sh"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	refA, err := build("cronscale.local/test", cfg, []string{root}, a, true)
	if err != nil {
		t.Fatal(err)
	}
	// Touch everything: mtimes must not matter.
	_ = os.Chtimes(filepath.Join(root, "usr/bin/tool"), epoch.AddDate(30, 0, 0), epoch.AddDate(30, 0, 0))
	refB, err := build("cronscale.local/test", cfg, []string{root}, b, true)
	if err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if refA != refB || !bytes.Equal(ba, bb) {
		t.Fatalf("two builds of the same tree differ: %s vs %s", refA, refB)
	}
}

func TestArchiveDigestsAndNames(t *testing.T) {
	root := makeTree(t)
	out := filepath.Join(t.TempDir(), "img.tar")
	ref, err := build("cronscale.local/test", "", []string{root, root}, out, true)
	if err != nil {
		t.Fatal(err)
	}
	files := readArchive(t, out)
	// Every blob is named by its own digest.
	for name, data := range files {
		if strings.HasPrefix(name, "blobs/sha256/") && len(name) > len("blobs/sha256/") {
			if got := hexSHA(data); "blobs/sha256/"+got != name {
				t.Errorf("%s has digest %s", name, got)
			}
		}
	}
	var idx index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations["io.containerd.image.name"] != ref {
		t.Fatalf("index does not name %s: %s", ref, files["index.json"])
	}
	mDigest := strings.TrimPrefix(idx.Manifests[0].Digest, "sha256:")
	if !strings.HasSuffix(ref, ":"+mDigest[:12]) {
		t.Errorf("ref %s is not named after manifest %s", ref, mDigest)
	}
	var m manifest
	if err := json.Unmarshal(files[blobPath(idx.Manifests[0].Digest)], &m); err != nil {
		t.Fatal(err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(files[blobPath(m.Config.Digest)], &cfg); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 2 || len(cfg.RootFS.DiffIDs) != 2 {
		t.Fatalf("want 2 layers, got %d / %d", len(m.Layers), len(cfg.RootFS.DiffIDs))
	}
	// diff_ids are the digests of the uncompressed layers.
	for i, l := range m.Layers {
		zr, err := gzip.NewReader(bytes.NewReader(files[blobPath(l.Digest)]))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if "sha256:"+hexSHA(raw) != cfg.RootFS.DiffIDs[i] {
			t.Errorf("layer %d: diff_id mismatch", i)
		}
		if int64(len(files[blobPath(l.Digest)])) != l.Size {
			t.Errorf("layer %d: size mismatch", i)
		}
	}
	var dm []dockerManifest
	if err := json.Unmarshal(files["manifest.json"], &dm); err != nil {
		t.Fatal(err)
	}
	if len(dm) != 1 || dm[0].RepoTags[0] != ref || dm[0].Config != blobPath(m.Config.Digest) {
		t.Errorf("docker manifest.json does not match: %s", files["manifest.json"])
	}
}

func TestLayerEntries(t *testing.T) {
	root := makeTree(t)
	l, err := writeLayer(root, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var names []string
	seen := map[string]*tar.Header{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		seen[hdr.Name] = hdr
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: mtime %v", hdr.Name, hdr.ModTime)
		}
	}
	want := []string{"bin", "tmp/", "usr/", "usr/bin/", "usr/bin/tool", "usr/bin/tool-alias", "usr/" + strings.Repeat("long", 40)}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("entries %v, want %v", names, want)
	}
	if h := seen["bin"]; h.Typeflag != tar.TypeSymlink || h.Linkname != "usr/bin" {
		t.Errorf("bin: %+v", h)
	}
	if h := seen["usr/bin/tool-alias"]; h.Typeflag != tar.TypeLink || h.Linkname != "usr/bin/tool" {
		t.Errorf("hard link not kept: %+v", h)
	}
	if h := seen["tmp/"]; h.Mode != 0o1777 {
		t.Errorf("tmp mode %o", h.Mode)
	}
	if h := seen["usr/bin/tool"]; h.Mode != 0o755 || h.Uid != os.Getuid() {
		t.Errorf("tool: mode %o uid %d", h.Mode, h.Uid)
	}
}
