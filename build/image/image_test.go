package image_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/build/image"
)

// copyTo copies src to dir/name and returns the new path.
func copyTo(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestWriteRead(t *testing.T) {
	other := copyTo(t, plugin, t.TempDir(), "other.so")
	dirs := map[string]image.File{
		"/compiled-auth-plugins": {Mode: os.ModeDir | 0o755},
		"/usr":                   {Mode: os.ModeDir | 0o755},
		"/usr/local":             {Mode: os.ModeDir | 0o755},
		"/usr/local/bin":         {Mode: os.ModeDir | 0o755},
	}
	tests := []struct {
		name      string
		opts      image.Options
		wantRef   string
		wantTitle string
		wantSOs   []string
	}{
		{
			name:      "one plugin, default repository",
			opts:      image.Options{PluginFiles: []string{plugin}, CopierBinary: copier, Version: "0.1.0"},
			wantRef:   "gatehouse/auth-plugins:0.1.0",
			wantTitle: "gatehouse/auth-plugins",
			wantSOs:   []string{"required_header.so"},
		},
		{
			name:      "two plugins, named repository",
			opts:      image.Options{PluginFiles: []string{other, plugin}, CopierBinary: copier, Version: "1.2.3-rc.1", Repository: "registry.example:5000/team/my-plugins"},
			wantRef:   "registry.example:5000/team/my-plugins:1.2.3-rc.1",
			wantTitle: "registry.example:5000/team/my-plugins",
			wantSOs:   []string{"other.so", "required_header.so"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "layout")
			digest, err := image.Write(out, tt.opts)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := image.Read(out)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			files := map[string]image.File{"/usr/local/bin/gatehouse-plugin-copier": {Size: size(t, copier), Mode: 0o755}}
			for k, v := range dirs {
				files[k] = v
			}
			for _, so := range tt.wantSOs {
				files["/compiled-auth-plugins/"+so] = image.File{Size: size(t, plugin), Mode: 0o755}
			}
			want := &image.Info{
				Digest:     digest,
				RefName:    tt.wantRef,
				Platform:   "linux/amd64",
				Entrypoint: []string{"/usr/local/bin/gatehouse-plugin-copier", "--from", "/compiled-auth-plugins", "--to", "/auth-plugins"},
				User:       "65532:65532",
				Labels:     map[string]string{"dev.gatehouse.version": tt.opts.Version, "org.opencontainers.image.title": tt.wantTitle},
				Files:      files,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	opts := image.Options{PluginFiles: []string{plugin}, CopierBinary: copier, Version: "0.1.0"}
	var digests []string
	var indexes [][]byte
	// The second layout goes into a directory that exists and is empty, which Write accepts.
	for _, out := range []string{filepath.Join(t.TempDir(), "layout"), t.TempDir()} {
		digest, err := image.Write(out, opts)
		if err != nil {
			t.Fatal(err)
		}
		index, err := os.ReadFile(filepath.Join(out, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, digest.String())
		indexes = append(indexes, index)
	}
	if digests[0] != digests[1] {
		t.Errorf("same inputs, different digests: %s and %s", digests[0], digests[1])
	}
	if !bytes.Equal(indexes[0], indexes[1]) {
		t.Errorf("same inputs, different index.json:\n%s\n%s", indexes[0], indexes[1])
	}
}

func TestWriteErrors(t *testing.T) {
	tmp := t.TempDir()
	notSO := copyTo(t, plugin, tmp, "plugin.bin")
	dupDir := t.TempDir()
	dup := copyTo(t, plugin, dupDir, "required_header.so")
	full := t.TempDir()
	copyTo(t, plugin, full, "left-over")
	ok := image.Options{PluginFiles: []string{plugin}, CopierBinary: copier, Version: "0.1.0"}
	with := func(f func(o *image.Options)) image.Options { o := ok; f(&o); return o }
	tests := []struct {
		name string
		out  string
		opts image.Options
		want []string // substrings of the error, with TMP standing for tmp
	}{
		{"missing plugin file", "", with(func(o *image.Options) { o.PluginFiles = []string{"TMP/missing.so"} }),
			[]string{"build/image: TMP/missing.so: no such file or directory"}},
		{"no plugin files", "", with(func(o *image.Options) { o.PluginFiles = nil }),
			[]string{"plugin files: none given"}},
		{"not a .so name", "", with(func(o *image.Options) { o.PluginFiles = []string{notSO} }),
			[]string{"TMP/plugin.bin: plugin file name must end in .so"}},
		{"two plugins with one name", "", with(func(o *image.Options) { o.PluginFiles = []string{plugin, dup} }),
			[]string{"same file name as " + plugin}},
		{"plugin is not ELF", "", with(func(o *image.Options) { o.PluginFiles = []string{copyTo(t, "image.go", tmp, "text.so")} }),
			[]string{"TMP/text.so: not an ELF file"}},
		{"copier missing", "", with(func(o *image.Options) { o.CopierBinary = "" }),
			[]string{"copier: required"}},
		{"copier for another architecture", "", with(func(o *image.Options) { o.CopierBinary = copierARM64 }),
			[]string{"built for EM_AARCH64, the image is linux/amd64"}},
		// The system shell links against libc, which the image does not have.
		{"copier dynamically linked", "", with(func(o *image.Options) { o.CopierBinary = "/bin/sh" }),
			[]string{"/bin/sh: dynamically linked; build it with CGO_ENABLED=0"}},
		{"no version", "", with(func(o *image.Options) { o.Version = "" }),
			[]string{"version: required"}},
		{"bad repository", "", with(func(o *image.Options) { o.Repository = "Upper/Case" }),
			[]string{`repository "Upper/Case", version "0.1.0": not an image reference`}},
		{"every problem at once", "", image.Options{PluginFiles: []string{"TMP/missing.so"}},
			[]string{"version: required", "missing.so: no such file", "copier: required"}},
		{"output not empty", full, ok,
			[]string{"is not empty; remove it or choose another --out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, p := range tt.opts.PluginFiles {
				tt.opts.PluginFiles[i] = strings.ReplaceAll(p, "TMP", tmp)
			}
			out := tt.out
			if out == "" {
				out = filepath.Join(t.TempDir(), "layout")
			}
			_, err := image.Write(out, tt.opts)
			if err == nil {
				t.Fatal("Write succeeded, want an error")
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "TMP", tmp); !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tt.out == "" {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("failed Write left %s behind (stat: %v)", out, err)
				}
			}
		})
	}
}

// TestExtractedImageCopiesPlugins runs the image the way an init container does, without
// a container engine: unpack its filesystem and run its entrypoint against a fresh volume.
func TestExtractedImageCopiesPlugins(t *testing.T) {
	layoutDir := filepath.Join(t.TempDir(), "layout")
	if _, err := image.Write(layoutDir, image.Options{PluginFiles: []string{plugin}, CopierBinary: copier, Version: "0.1.0"}); err != nil {
		t.Fatal(err)
	}
	rootfs, volume := t.TempDir(), t.TempDir()
	if err := image.Extract(layoutDir, rootfs); err != nil {
		t.Fatal(err)
	}
	info, err := image.Read(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	// The entrypoint's paths are absolute inside the image; map them into rootfs and volume.
	args := append([]string(nil), info.Entrypoint...)
	args[0] = filepath.Join(rootfs, args[0])
	args[2] = filepath.Join(rootfs, args[2])
	args[4] = volume
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("entrypoint %v: %v\n%s", args, err, out)
	}
	want := fmt.Sprintf("copied %s/compiled-auth-plugins/required_header.so -> %s/required_header.so (%d bytes)\n", rootfs, volume, size(t, plugin))
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("copier output (-want +got):\n%s", diff)
	}
	wantBytes, err := os.ReadFile(plugin)
	if err != nil {
		t.Fatal(err)
	}
	gotBytes, err := os.ReadFile(filepath.Join(volume, "required_header.so"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wantBytes, gotBytes) {
		t.Errorf("copied plugin differs from the built one (%d bytes, want %d)", len(gotBytes), len(wantBytes))
	}
	st, err := os.Stat(filepath.Join(volume, "required_header.so"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(os.FileMode(0o755), st.Mode()); diff != "" {
		t.Errorf("copied plugin mode (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "auth-plugins")); !os.IsNotExist(err) {
		t.Errorf("entrypoint wrote into the image root instead of the volume (stat: %v)", err)
	}
}
