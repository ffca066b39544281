package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// epoch is the timestamp every layer entry and the image config carry, so the same inputs
// always give the same bytes (and so the same digests) whenever they are built.
var epoch = time.Unix(0, 0).UTC()

// Layer describes one finished layer blob.
type Layer struct {
	Path   string // temporary file holding the (compressed) blob
	Digest string // sha256 of the blob
	Size   int64  // size of the blob
	DiffID string // sha256 of the uncompressed tar
}

// writeLayer writes DIR as a deterministic layer tar (gzip-compressed when compress is set) to
// a file in tmpDir: entries in lexical order, fixed mtimes, numeric owners taken from the
// directory as it is on disk, hard links kept as links.
func writeLayer(dir, tmpDir string, compress bool) (*Layer, error) {
	f, err := os.CreateTemp(tmpDir, "layer-*.blob")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	blobHash := sha256.New()
	diffHash := sha256.New()
	blobW := &countWriter{w: io.MultiWriter(f, blobHash)}
	var tarOut io.Writer = blobW
	var gz *gzip.Writer
	if compress {
		gz, err = gzip.NewWriterLevel(blobW, gzip.BestSpeed)
		if err != nil {
			return nil, err
		}
		tarOut = gz
	}
	tw := tar.NewWriter(io.MultiWriter(tarOut, diffHash))
	if err := addTree(tw, dir); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return nil, err
		}
	}
	return &Layer{Path: f.Name(), Digest: digestOf(blobHash), Size: blobW.n, DiffID: digestOf(diffHash)}, f.Close()
}

// addTree adds every entry below root (not root itself) to tw.
func addTree(tw *tar.Writer, root string) error {
	links := map[[2]uint64]string{}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, ModTime: epoch, Mode: int64(info.Mode().Perm())}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			// Keep setuid/setgid/sticky bits (e.g. /tmp's sticky bit) in the tar mode.
			hdr.Mode = int64(st.Mode & 0o7777)
			if info.Mode().IsRegular() && st.Nlink > 1 {
				key := [2]uint64{st.Dev, st.Ino}
				if first, seen := links[key]; seen {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
					return tw.WriteHeader(hdr)
				}
				links[key] = name
			}
		}
		switch {
		case info.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
			return tw.WriteHeader(hdr)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
			return tw.WriteHeader(hdr)
		case info.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			src, err := os.Open(path)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(tw, src)
			return err
		default:
			// Device nodes, sockets and FIFOs have no place in an image layer built from
			// packages; the runtime provides /dev.
			return fmt.Errorf("unsupported file type %s at %s", info.Mode().Type(), name)
		}
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func digestOf(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }
