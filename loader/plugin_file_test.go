package loader_test

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/internal/version"
	"gatehouse.dev/gatehouse/loader"
)

func TestReadPluginFileRefusesWhatIsNotAPlugin(t *testing.T) {
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	const recopy = "copy the file again; the plugin image's copier writes files atomically, so a half-written file means something else wrote it"
	const rebuild = "build the plugin with `go build -buildmode=plugin` (or `gatehouse plugin build`)"
	tests := []struct {
		name    string
		content func(path string)
		want    loader.Finding
	}{
		{
			name:    "empty",
			content: func(p string) { write(t, p, nil) },
			want:    loader.Finding{Severity: "error", Check: "file", Detail: "empty file", Fix: rebuild},
		},
		{
			name:    "text",
			content: func(p string) { write(t, p, []byte("not a plugin\n")) },
			want:    loader.Finding{Severity: "error", Check: "file", Detail: `not an ELF file (it starts with "not ")`, Fix: rebuild},
		},
		{
			name: "gzip",
			content: func(p string) {
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				zw := gzip.NewWriter(f)
				zw.Write(exe[:1000])
				zw.Close()
				f.Close()
			},
			want: loader.Finding{Severity: "error", Check: "file", Detail: "not an ELF file: it is gzip-compressed; extract the .so from the archive", Fix: rebuild},
		},
		{
			name:    "truncated",
			content: func(p string) { write(t, p, exe[:len(exe)/2]) },
			want: loader.Finding{Severity: "error", Check: "file",
				Detail: "truncated: the file is " + itoa(len(exe)/2) + " bytes but its ELF headers describe at least " + itoa(len(exe)), Fix: recopy},
		},
		{
			name:    "header only",
			content: func(p string) { write(t, p, exe[:40]) },
			want:    loader.Finding{Severity: "error", Check: "file", Detail: "truncated: the file is 40 bytes, shorter than an ELF header (64)", Fix: recopy},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.so")
			tt.content(path)
			pf, got := loader.ReadPluginFile(path)
			if pf != nil || got == nil {
				t.Fatalf("ReadPluginFile = %v, %v; want a finding", pf, got)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("finding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadPluginFileOfAnExecutable(t *testing.T) {
	pf, bad := loader.ReadPluginFile("/proc/self/exe")
	if bad != nil {
		t.Fatalf("ReadPluginFile(test binary): %v", bad)
	}
	if pf.ELF.Type != "ET_EXEC" || pf.GoVersion != runtime.Version() || pf.Settings["-buildmode"] != "exe" {
		t.Errorf("got type %s, Go %s, -buildmode %s; want ET_EXEC, %s, exe", pf.ELF.Type, pf.GoVersion, pf.Settings["-buildmode"], runtime.Version())
	}
	c, err := loader.HostContract()
	if err != nil {
		t.Fatal(err)
	}
	want := []loader.Finding{
		{Severity: "error", Check: "-buildmode", Host: "plugin", Plugin: "exe", Fix: "build with `go build -buildmode=plugin`"},
		{Severity: "error", Check: "file", Detail: "ELF type ET_EXEC: not a shared object", Fix: "build with `go build -buildmode=plugin`"},
	}
	if diff := cmp.Diff(want, loader.Errors(loader.Preflight(c, pf))); diff != "" {
		t.Errorf("Preflight errors (-want +got):\n%s", diff)
	}
}

func TestPluginHostContract(t *testing.T) {
	c, err := loader.HostContract()
	if err != nil {
		t.Fatal(err)
	}
	if c.GoVersion != runtime.Version() || c.GatehouseVersion != version.Version || c.GOOS != runtime.GOOS || c.GOARCH != runtime.GOARCH {
		t.Errorf("contract says %s %s %s/%s; want %s %s %s/%s", c.GatehouseVersion, c.GoVersion, c.GOOS, c.GOARCH,
			version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	// The test binary can open plugins (it links package plugin), so its dynamic symbol
	// table has a hash for every package, this one included.
	for _, pkg := range []string{"runtime", "gatehouse.dev/gatehouse/loader", "gatehouse.dev/gatehouse/pluginapi"} {
		if len(c.PackageHashes[pkg]) != 16 {
			t.Errorf("package hash of %s = %q; want 8 bytes in hex", pkg, c.PackageHashes[pkg])
		}
	}
	bi, _ := debug.ReadBuildInfo()
	if len(c.Modules) != len(bi.Deps) || c.Main.Path != bi.Main.Path {
		t.Errorf("contract has main %s and %d modules; build info has %s and %d", c.Main.Path, len(c.Modules), bi.Main.Path, len(bi.Deps))
	}
	if c.Libc == nil || c.Libc.Name != "glibc" || c.Libc.Version == "" {
		t.Errorf("libc = %+v; want glibc with a version", c.Libc)
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
