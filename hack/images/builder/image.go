package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Media types of the OCI image spec (v1.1).
const (
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayerGz  = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaLayerTar = "application/vnd.oci.image.layer.v1.tar"
)

// RunConfig is the part of the image config that says how a container starts.
type RunConfig struct {
	User         string              `json:"User,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	Created      string    `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       RunConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// dockerManifest is one entry of a docker-archive's manifest.json (what `docker load` reads).
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// Image is an assembled image: its blobs and the reference it is named by.
type Image struct {
	Ref            string
	ManifestDigest string
	blobs          map[string]blob // digest -> content
	layers         []*Layer
	configDigest   string
}

type blob struct {
	path string // file with the content, or
	data []byte // the content itself
}

// assemble builds the config and manifest for layers; the tag is the first 12 hex digits of
// the manifest digest, so the reference names the content.
func assemble(repo string, layers []*Layer, cfg RunConfig, compress bool) (*Image, error) {
	ic := imageConfig{Created: epoch.Format("2006-01-02T15:04:05Z"), Architecture: "amd64", OS: "linux", Config: cfg}
	ic.RootFS.Type = "layers"
	ic.RootFS.DiffIDs = []string{}
	img := &Image{blobs: map[string]blob{}, layers: layers}
	m := manifest{SchemaVersion: 2, MediaType: mediaManifest, Layers: []descriptor{}}
	layerType := mediaLayerTar
	if compress {
		layerType = mediaLayerGz
	}
	for _, l := range layers {
		ic.RootFS.DiffIDs = append(ic.RootFS.DiffIDs, l.DiffID)
		m.Layers = append(m.Layers, descriptor{MediaType: layerType, Digest: l.Digest, Size: l.Size})
		img.blobs[l.Digest] = blob{path: l.Path}
	}
	cfgJSON, err := json.Marshal(ic)
	if err != nil {
		return nil, err
	}
	img.configDigest = sha(cfgJSON)
	img.blobs[img.configDigest] = blob{data: cfgJSON}
	m.Config = descriptor{MediaType: mediaConfig, Digest: img.configDigest, Size: int64(len(cfgJSON))}
	mJSON, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	img.ManifestDigest = sha(mJSON)
	img.blobs[img.ManifestDigest] = blob{data: mJSON}
	img.Ref = repo + ":" + strings.TrimPrefix(img.ManifestDigest, "sha256:")[:12]
	return img, nil
}

// writeArchive writes img as one tar that is both an OCI image layout (index.json names the
// image through io.containerd.image.name and org.opencontainers.image.ref.name, which
// `ctr images import` uses as the image name) and a docker-archive (manifest.json with
// RepoTags, which `docker load` uses), sharing the same blobs.
func writeArchive(img *Image, out string) error {
	manifestDesc := descriptor{
		MediaType: mediaManifest, Digest: img.ManifestDigest, Size: int64(len(img.blobs[img.ManifestDigest].data)),
		Annotations: map[string]string{
			"io.containerd.image.name":          img.Ref,
			"org.opencontainers.image.ref.name": img.Ref,
		},
		Platform: &platform{Architecture: "amd64", OS: "linux"},
	}
	idxJSON, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{manifestDesc}})
	if err != nil {
		return err
	}
	dm := []dockerManifest{{Config: blobPath(img.configDigest), RepoTags: []string{img.Ref}, Layers: []string{}}}
	for _, l := range img.layers {
		dm[0].Layers = append(dm[0].Layers, blobPath(l.Digest))
	}
	dmJSON, err := json.Marshal(dm)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	digests := make([]string, 0, len(img.blobs))
	for d := range img.blobs {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		if err := writeBlob(tw, blobPath(d), img.blobs[d]); err != nil {
			return err
		}
	}
	for _, e := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idxJSON},
		{"manifest.json", dmJSON},
	} {
		if err := writeBlob(tw, e.name, blob{data: e.data}); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func writeBlob(tw *tar.Writer, name string, b blob) error {
	hdr := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o444, ModTime: epoch}
	if b.path == "" {
		hdr.Size = int64(len(b.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(b.data)
		return err
	}
	src, err := os.Open(b.path)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	hdr.Size = st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, src)
	if err == nil && n != hdr.Size {
		err = fmt.Errorf("blob %s changed while writing", name)
	}
	return err
}

func blobPath(digest string) string {
	return filepath.ToSlash(filepath.Join("blobs", "sha256", strings.TrimPrefix(digest, "sha256:")))
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
