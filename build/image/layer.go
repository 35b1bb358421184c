package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// pluginLayer builds the image's only layer: the plugins under PluginDir and the copier
// at CopierPath, owned by root, mode 0755, every timestamp at epoch.
func pluginLayer(plugins []string, copier string) (v1.Layer, error) {
	files := map[string]string{strings.TrimPrefix(CopierPath, "/"): copier}
	for _, p := range plugins {
		files[path.Join(strings.TrimPrefix(PluginDir, "/"), filepath.Base(p))] = p
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range parentDirs(files) {
		if err := tw.WriteHeader(header(d+"/", tar.TypeDir, 0)); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := addFile(tw, n, files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// addFile appends the file at src to tw as name.
func addFile(tw *tar.Writer, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(header(name, tar.TypeReg, st.Size())); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if n != st.Size() {
		return fmt.Errorf("%s: changed while it was read", src)
	}
	return nil
}

func header(name string, typ byte, size int64) *tar.Header {
	return &tar.Header{Typeflag: typ, Name: name, Size: size, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}
}

// parentDirs lists every directory above the given paths, parents first.
func parentDirs(files map[string]string) []string {
	set := map[string]bool{}
	for f := range files {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			set[d] = true
		}
	}
	dirs := make([]string, 0, len(set))
	for d := range set {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}
