package loader_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

const viaBuild = "`gatehouse plugin build --module DIR --out DIR` builds with the host's settings"

// host is a synthetic contract: a gatehouse binary linking golang.org/x/sys and the
// plugin API, built without -trimpath.
func host() *loader.Contract {
	return &loader.Contract{
		GatehouseVersion: "0.1.0",
		GoVersion:        "go1.26.8",
		GOOS:             "linux",
		GOARCH:           "amd64",
		Settings: map[string]string{
			"-buildmode": "exe", "-compiler": "gc", "CGO_ENABLED": "1",
			"GOOS": "linux", "GOARCH": "amd64", "GOAMD64": "v1",
		},
		Main: loader.Module{Path: "gatehouse.dev/gatehouse", Version: "(devel)"},
		Modules: []loader.Module{
			{Path: "golang.org/x/sys", Version: "v0.48.0", Sum: "h1:host"},
			{Path: "golang.org/x/text", Version: "v0.42.0", Sum: "h1:text"},
		},
		Libc: &loader.Libc{Name: "glibc", Version: "2.36"},
		PackageHashes: map[string]string{
			"runtime": "r1", "fmt": "f1",
			"golang.org/x/sys/unix":             "u1",
			"golang.org/x/text/transform":       "t1",
			"gatehouse.dev/gatehouse/pluginapi": "p1",
			"gatehouse.dev/gatehouse/server":    "s1",
		},
	}
}

// plugin is a synthetic plugin that matches host.
func plugin() *loader.PluginFile {
	return &loader.PluginFile{
		GoVersion:   "go1.26.8",
		MainPackage: "example.com/myplugin",
		Main:        loader.Module{Path: "example.com/myplugin", Version: "(devel)"},
		Modules: []loader.Module{
			{Path: "gatehouse.dev/gatehouse", Version: "v0.1.0", Sum: "h1:gh"},
			{Path: "golang.org/x/sys", Version: "v0.48.0", Sum: "h1:host"},
		},
		Settings: map[string]string{
			"-buildmode": "plugin", "-compiler": "gc", "CGO_ENABLED": "1",
			"GOOS": "linux", "GOARCH": "amd64", "GOAMD64": "v1",
		},
		PluginPath: "example.com/myplugin",
		PackageHashes: map[string]string{
			"runtime": "r1", "fmt": "f1",
			"golang.org/x/sys/unix":             "u1",
			"gatehouse.dev/gatehouse/pluginapi": "p1",
			"example.com/myplugin":              "m1",
		},
		Libc: loader.LibcNeeds{Libraries: []string{"libc.so.6"}, GLIBC: "GLIBC_2.34"},
		ELF:  loader.ELFDescription{Class: "ELFCLASS64", Type: "ET_DYN", Machine: "EM_X86_64"},
	}
}

func TestPluginPreflight(t *testing.T) {
	tests := []struct {
		name   string
		host   func(*loader.Contract)
		plugin func(*loader.PluginFile)
		want   []loader.Finding
	}{
		{name: "identical"},
		{
			name:   "another patch release",
			plugin: func(p *loader.PluginFile) { p.GoVersion = "go1.26.7"; rehash(p, "r2", "runtime", "fmt") },
			want: []loader.Finding{{Severity: "error", Check: "go version", Host: "go1.26.8", Plugin: "go1.26.7",
				Fix: "rebuild with go1.26.8: " + viaBuild + ", or `GOTOOLCHAIN=go1.26.8 go build -buildmode=plugin …`"}},
		},
		{
			name:   "another minor release crashes",
			plugin: func(p *loader.PluginFile) { p.GoVersion = "go1.25.0"; p.PackageHashes = nil },
			want: []loader.Finding{{Severity: "error", Check: "go version", Host: "go1.26.8", Plugin: "go1.25.0",
				Detail: "opening a plugin of another Go release can crash the whole process, so it is never opened",
				Fix:    "rebuild with go1.26.8: " + viaBuild + ", or `GOTOOLCHAIN=go1.26.8 go build -buildmode=plugin …`"},
				{Severity: "warning", Check: "package hashes", Detail: "the plugin has no package hashes (built by an older Go?); the checks above stand in for them"}},
		},
		{
			name: "experiment suffix is not a Go version difference",
			plugin: func(p *loader.PluginFile) {
				p.GoVersion = "go1.26.8-X:arenas"
				p.Settings["GOEXPERIMENT"] = "arenas"
				rehash(p, "x", "runtime")
			},
			want: []loader.Finding{{Severity: "error", Check: "GOEXPERIMENT", Host: "", Plugin: "arenas",
				Fix: "rebuild with GOEXPERIMENT unset; " + viaBuild}},
		},
		{
			name:   "-trimpath on the plugin only",
			plugin: func(p *loader.PluginFile) { p.Settings["-trimpath"] = "true"; rehash(p, "x", "runtime", "fmt") },
			want: []loader.Finding{{Severity: "error", Check: "-trimpath", Host: "false", Plugin: "true",
				Fix: "rebuild without -trimpath; " + viaBuild}},
		},
		{
			name:   "-trimpath on the host only",
			host:   func(c *loader.Contract) { c.Settings["-trimpath"] = "true" },
			plugin: func(p *loader.PluginFile) { rehash(p, "x", "runtime") },
			want: []loader.Finding{{Severity: "error", Check: "-trimpath", Host: "true", Plugin: "false",
				Fix: "rebuild with -trimpath; " + viaBuild}},
		},
		{
			name: "-race and CGO_ENABLED",
			plugin: func(p *loader.PluginFile) {
				p.Settings["-race"] = "true"
				p.Settings["CGO_ENABLED"] = "0"
			},
			want: []loader.Finding{
				{Severity: "error", Check: "-race", Host: "false", Plugin: "true", Fix: "rebuild without -race; " + viaBuild},
				{Severity: "error", Check: "CGO_ENABLED", Host: "1", Plugin: "0", Fix: "rebuild with CGO_ENABLED=1; " + viaBuild},
			},
		},
		{
			name:   "-gcflags that change shared packages",
			plugin: func(p *loader.PluginFile) { p.Settings["-gcflags"] = "all=-N -l"; rehash(p, "x", "runtime") },
			want: []loader.Finding{{Severity: "error", Check: "-gcflags", Host: "", Plugin: "all=-N -l",
				Fix: "rebuild without -gcflags; " + viaBuild}},
		},
		{
			name:   "-gcflags for the plugin's own package only",
			plugin: func(p *loader.PluginFile) { p.Settings["-gcflags"] = "-m" },
			want: []loader.Finding{{Severity: "warning", Check: "-gcflags", Plugin: "-m",
				Detail: "no package shared with the host is affected, so it loads"}},
		},
		{
			name: "shared module at another version",
			plugin: func(p *loader.PluginFile) {
				p.Modules[1].Version, p.Modules[1].Sum = "v0.49.0", "h1:new"
				rehash(p, "u2", "golang.org/x/sys/unix")
			},
			want: []loader.Finding{{Severity: "error", Check: "module golang.org/x/sys", Host: "v0.48.0", Plugin: "v0.49.0",
				Detail: "shared package golang.org/x/sys/unix differs",
				Fix:    "go mod edit -require=golang.org/x/sys@v0.48.0 && go mod tidy, then rebuild; " + viaBuild + " (it pins every shared module)"}},
		},
		{
			name:   "shared module at another version, no shared package changed",
			plugin: func(p *loader.PluginFile) { p.Modules[1].Version = "v0.49.0" },
			want: []loader.Finding{{Severity: "warning", Check: "module golang.org/x/sys", Host: "v0.48.0", Plugin: "v0.49.0",
				Detail: "no package of it that both link differs, so it loads; go mod edit -require=golang.org/x/sys@v0.48.0 && go mod tidy keeps it that way"}},
		},
		{
			name: "same version, another sum",
			plugin: func(p *loader.PluginFile) {
				p.Modules[1].Sum = "h1:fork"
				rehash(p, "u2", "golang.org/x/sys/unix")
			},
			want: []loader.Finding{{Severity: "error", Check: "module golang.org/x/sys", Host: "v0.48.0 h1:host", Plugin: "v0.48.0 h1:fork",
				Detail: "shared package golang.org/x/sys/unix differs",
				Fix:    "go mod edit -require=golang.org/x/sys@v0.48.0 && go mod tidy, then rebuild; " + viaBuild + " (it pins every shared module)"}},
		},
		{
			name: "module replaced by a local directory",
			plugin: func(p *loader.PluginFile) {
				p.Modules[1].Replace = &loader.Module{Path: "../sys", Version: "(devel)"}
				rehash(p, "u2", "golang.org/x/sys/unix")
			},
			want: []loader.Finding{{Severity: "error", Check: "module golang.org/x/sys", Host: "v0.48.0", Plugin: "v0.48.0 (replaced by directory ../sys)",
				Detail: "shared package golang.org/x/sys/unix differs",
				Fix:    "go mod edit -dropreplace=golang.org/x/sys -require=golang.org/x/sys@v0.48.0 && go mod tidy, then rebuild; " + viaBuild + " (it pins every shared module)"}},
		},
		{
			name: "gatehouse built in-tree has no version to compare",
			plugin: func(p *loader.PluginFile) {
				p.Main = loader.Module{Path: "gatehouse.dev/gatehouse", Version: "(devel)"}
				p.Modules = p.Modules[1:]
			},
		},
		{
			name:   "gatehouse through a replace directive has no version to compare",
			plugin: func(p *loader.PluginFile) { p.Modules[0].Replace = &loader.Module{Path: "../gatehouse"} },
		},
		{
			name: "another gatehouse release with another plugin API",
			plugin: func(p *loader.PluginFile) {
				p.Modules[0].Version = "v0.2.0"
				rehash(p, "p2", "gatehouse.dev/gatehouse/pluginapi")
			},
			want: []loader.Finding{{Severity: "error", Check: "gatehouse version", Host: "0.1.0", Plugin: "v0.2.0",
				Detail: "shared package gatehouse.dev/gatehouse/pluginapi differs",
				Fix:    "go mod edit -require=gatehouse.dev/gatehouse@v0.1.0 && go mod tidy, then rebuild; " + viaBuild}},
		},
		{
			name:   "another gatehouse release with the same plugin API",
			plugin: func(p *loader.PluginFile) { p.Modules[0].Version = "v0.1.1" },
			want: []loader.Finding{{Severity: "warning", Check: "gatehouse version", Host: "0.1.0", Plugin: "v0.1.1",
				Detail: "the Gatehouse packages it links are identical to the host's, so it loads; rebuild against 0.1.0 to keep in step"}},
		},
		{
			name:   "another gatehouse major release",
			plugin: func(p *loader.PluginFile) { p.Modules[0].Version = "v1.0.0" },
			want: []loader.Finding{{Severity: "error", Check: "gatehouse version", Host: "0.1.0", Plugin: "v1.0.0",
				Fix: "go mod edit -require=gatehouse.dev/gatehouse@v0.1.0 && go mod tidy, then rebuild; " + viaBuild}},
		},
		{
			name:   "GOAMD64 and -tags alone are accepted",
			plugin: func(p *loader.PluginFile) { p.Settings["GOAMD64"] = "v3"; p.Settings["-tags"] = "foo" },
			want: []loader.Finding{
				{Severity: "warning", Check: "-tags", Plugin: "foo", Detail: "accepted by the runtime"},
				{Severity: "warning", Check: "GOAMD64", Host: "v1", Plugin: "v3", Detail: "the plugin only runs on CPUs that support GOAMD64=v3"},
			},
		},
		{
			name: "GOAMD64 that changed a shared package",
			plugin: func(p *loader.PluginFile) {
				p.Settings["GOAMD64"] = "v3"
				rehash(p, "p2", "gatehouse.dev/gatehouse/pluginapi")
			},
			want: []loader.Finding{
				{Severity: "warning", Check: "GOAMD64", Host: "v1", Plugin: "v3", Detail: "the plugin only runs on CPUs that support GOAMD64=v3"},
				{Severity: "error", Check: "package hashes",
					Detail: "1 shared package (gatehouse.dev/gatehouse/pluginapi): compiled differently from the host's copy, so plugin.Open refuses the plugin (\"plugin was built with a different version of package …\")",
					Fix:    "rebuild with the host's settings, which differ in GOAMD64 (host v1, plugin v3); " + viaBuild},
			},
		},
		{
			name:   "packages from other sources",
			plugin: func(p *loader.PluginFile) { rehash(p, "x", "fmt", "gatehouse.dev/gatehouse/pluginapi") },
			want: []loader.Finding{{Severity: "error", Check: "package hashes",
				Detail: "2 shared packages (fmt, gatehouse.dev/gatehouse/pluginapi): compiled differently from the host's copy, so plugin.Open refuses the plugin (\"plugin was built with a different version of package …\")",
				Fix:    "build the plugin from the sources the host was built from (a replace directive, an edited module cache or, without -trimpath, another source directory all change the hashes); " + viaBuild + " (pass --gatehouse-src with the directory gatehouse was built from)"}},
		},
		{
			name: "a newer glibc and musl",
			plugin: func(p *loader.PluginFile) {
				p.Libc = loader.LibcNeeds{Libraries: []string{"libc.musl-x86_64.so.1", "libc.so.6"}, GLIBC: "GLIBC_2.38"}
			},
			want: []loader.Finding{
				{Severity: "error", Check: "libc", Host: "glibc 2.36", Plugin: "libc.musl-x86_64.so.1", Fix: "build the plugin against glibc, like the host (the gatehouse plugin builder image does)"},
				{Severity: "error", Check: "libc", Host: "glibc 2.36", Plugin: "needs GLIBC_2.38", Fix: "build the plugin on a system whose glibc is not newer than 2.36, such as the gatehouse plugin builder image (the same Debian release as the server)"},
			},
		},
		{
			name: "an executable, for another machine",
			plugin: func(p *loader.PluginFile) {
				p.Settings["-buildmode"] = "exe"
				p.ELF.Type, p.ELF.Machine = "ET_EXEC", "EM_AARCH64"
			},
			want: []loader.Finding{
				{Severity: "error", Check: "-buildmode", Host: "plugin", Plugin: "exe", Fix: "build with `go build -buildmode=plugin`"},
				{Severity: "error", Check: "file", Detail: "ELF type ET_EXEC: not a shared object", Fix: "build with `go build -buildmode=plugin`"},
				{Severity: "error", Check: "ELF machine", Host: "EM_X86_64", Plugin: "EM_AARCH64", Fix: "rebuild with GOARCH=amd64"},
			},
		},
		{
			name: "every difference is reported",
			plugin: func(p *loader.PluginFile) {
				p.GoVersion = "go1.26.7"
				p.Settings["-race"] = "true"
				p.Settings["-trimpath"] = "true"
			},
			want: []loader.Finding{
				{Severity: "error", Check: "go version", Host: "go1.26.8", Plugin: "go1.26.7", Fix: "rebuild with go1.26.8: " + viaBuild + ", or `GOTOOLCHAIN=go1.26.8 go build -buildmode=plugin …`"},
				{Severity: "error", Check: "-trimpath", Host: "false", Plugin: "true", Fix: "rebuild without -trimpath; " + viaBuild},
				{Severity: "error", Check: "-race", Host: "false", Plugin: "true", Fix: "rebuild without -race; " + viaBuild},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := host(), plugin()
			if tt.host != nil {
				tt.host(c)
			}
			if tt.plugin != nil {
				tt.plugin(p)
			}
			got := loader.Preflight(c, p)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Preflight findings (-want +got):\n%s", diff)
			}
		})
	}
}

// rehash gives pkgs another hash in p, as a different compilation would.
func rehash(p *loader.PluginFile, hash string, pkgs ...string) {
	for _, pkg := range pkgs {
		p.PackageHashes[pkg] = hash
	}
}
