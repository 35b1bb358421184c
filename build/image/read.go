package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Info describes the plugin image found in a layout.
type Info struct {
	Digest     v1.Hash           // manifest digest
	RefName    string            // org.opencontainers.image.ref.name of the index entry
	Platform   string            // "os/arch" of the config
	Entrypoint []string          // config entrypoint
	User       string            // config user
	Labels     map[string]string // config labels
	Files      map[string]File   // every layer entry by absolute path
}

// File is one entry of the image's filesystem.
type File struct {
	Size int64
	Mode fs.FileMode
}

// Read reads back the single image of the OCI layout at layoutDir.
func Read(layoutDir string) (*Info, error) {
	img, desc, err := single(layoutDir)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("build/image: %s: config: %w", layoutDir, err)
	}
	info := &Info{
		Digest:     desc.Digest,
		RefName:    desc.Annotations[AnnotationRef],
		Platform:   cf.OS + "/" + cf.Architecture,
		Entrypoint: cf.Config.Entrypoint,
		User:       cf.Config.User,
		Labels:     cf.Config.Labels,
		Files:      map[string]File{},
	}
	err = walk(img, func(name string, h *tar.Header, _ io.Reader) error {
		info.Files[name] = File{Size: h.Size, Mode: h.FileInfo().Mode()}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("build/image: %s: %w", layoutDir, err)
	}
	return info, nil
}

// Extract unpacks the filesystem of the layout's single image into dest, as a container
// runtime would: directories and regular files only, with their modes. Files that already
// exist in dest are not overwritten: extracting onto them is an error.
func Extract(layoutDir, dest string) error {
	img, _, err := single(layoutDir)
	if err != nil {
		return err
	}
	err = walk(img, func(name string, h *tar.Header, r io.Reader) error {
		target := filepath.Join(dest, filepath.FromSlash(name))
		mode := h.FileInfo().Mode()
		if mode.IsDir() {
			return os.MkdirAll(target, mode.Perm())
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode.Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return fmt.Errorf("build/image: extracting %s: %w", layoutDir, err)
	}
	return nil
}

// single opens the layout and returns its only image and that image's index descriptor.
func single(layoutDir string) (v1.Image, v1.Descriptor, error) {
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("build/image: %s: not an OCI image layout: %w", layoutDir, err)
	}
	index, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("build/image: %s: %w", layoutDir, err)
	}
	m, err := index.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("build/image: %s: %w", layoutDir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, v1.Descriptor{}, fmt.Errorf("build/image: %s: holds %d manifests, want one plugin image", layoutDir, len(m.Manifests))
	}
	desc := m.Manifests[0]
	img, err := index.Image(desc.Digest)
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("build/image: %s: %w", layoutDir, err)
	}
	return img, desc, nil
}

// walk calls fn for every directory and regular file in the image's layers, in order, with
// the entry's absolute slash-separated path. Other entry types and paths that would leave
// the root are errors: a plugin image has no use for them.
func walk(img v1.Image, fn func(name string, h *tar.Header, r io.Reader) error) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		err = walkTar(rc, fn)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func walkTar(r io.Reader, fn func(name string, h *tar.Header, r io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		if !filepath.IsLocal(strings.TrimPrefix(h.Name, "/")) {
			return fmt.Errorf("layer entry %q: path leaves the image root", h.Name)
		}
		if h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg {
			return fmt.Errorf("layer entry %q: type %q is not a file or directory", h.Name, h.Typeflag)
		}
		if err := fn(name, h, tr); err != nil {
			return err
		}
	}
}
