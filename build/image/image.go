// Package image assembles a Gatehouse plugin image as an OCI image layout, without a
// container engine. The image holds compiled plugins under /compiled-auth-plugins and a
// static copier whose entrypoint copies them into /auth-plugins, which is how an init
// container of the extauth deployment delivers them (SPEC.md "Delivery of plugins").
//
// Push the layout with any OCI tool, for example `crane push LAYOUT REPOSITORY:VERSION`
// or `skopeo copy oci:LAYOUT docker://REPOSITORY:VERSION`.
package image

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and names inside the plugin image.
const (
	PluginDir     = "/compiled-auth-plugins"
	CopierPath    = "/usr/local/bin/gatehouse-plugin-copier"
	DestDir       = "/auth-plugins"
	User          = "65532:65532"
	LabelVersion  = "dev.gatehouse.version"
	LabelTitle    = "org.opencontainers.image.title"
	AnnotationRef = "org.opencontainers.image.ref.name"
	// DefaultRepository names the image when Options.Repository is empty.
	DefaultRepository = "gatehouse/auth-plugins"
)

// Entrypoint is the command the plugin image runs: copy the plugins into the shared volume.
var Entrypoint = []string{CopierPath, "--from", PluginDir, "--to", DestDir}

// epoch is every timestamp in the image, so the same inputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// Options say what goes into a plugin image.
type Options struct {
	// PluginFiles are the .so files to include under PluginDir, by their base names.
	PluginFiles []string
	// CopierBinary is the static copier (images/copier built with CGO_ENABLED=0), put at CopierPath.
	CopierBinary string
	// Version is the Gatehouse version the plugins were built for: the tag, and the
	// dev.gatehouse.version label the extauth server's version must equal.
	Version string
	// Repository names the image in the layout's org.opencontainers.image.ref.name
	// annotation, as Repository:Version; DefaultRepository when empty.
	Repository string
}

// Write writes an OCI image layout holding one linux/amd64 plugin image to layoutDir and
// returns the image's manifest digest. layoutDir must not exist or be empty; it appears
// complete or not at all.
func Write(layoutDir string, o Options) (v1.Hash, error) {
	if o.Repository == "" {
		o.Repository = DefaultRepository
	}
	ref, err := o.validate()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := checkEmpty(layoutDir); err != nil {
		return v1.Hash{}, err
	}
	img, err := build(o)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("build/image: %w", err)
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("build/image: %w", err)
	}
	index := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add: img,
		Descriptor: v1.Descriptor{
			Annotations: map[string]string{AnnotationRef: ref},
			Platform:    &v1.Platform{OS: "linux", Architecture: "amd64"},
		},
	})
	if err := writeLayout(layoutDir, index); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// build assembles the image: one layer, a config with the entrypoint and labels.
func build(o Options) (v1.Image, error) {
	layer, err := pluginLayer(o.PluginFiles, o.CopierBinary)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "gatehouse plugin image", Comment: "compiled plugins and copier"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: Entrypoint,
		User:       User,
		Labels:     map[string]string{LabelVersion: o.Version, LabelTitle: o.Repository},
	}
	return mutate.ConfigFile(img, cf)
}

// writeLayout writes index into a temporary sibling of dir and renames it into place.
func writeLayout(dir string, index v1.ImageIndex) error {
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return fmt.Errorf("build/image: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("build/image: %w", err)
	}
	if _, err := layout.Write(tmp, index); err != nil {
		return fmt.Errorf("build/image: writing layout: %w", err)
	}
	// os.Rename refuses to replace a directory; checkEmpty allowed only an empty one,
	// and os.Remove removes nothing else.
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("build/image: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("build/image: %w", err)
	}
	return nil
}

// checkEmpty fails unless dir is missing or an empty directory, so a layout never mixes
// with files that were there before.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("build/image: output: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("build/image: %s: directory is not empty; remove it or choose another --out", dir)
	}
	return nil
}
