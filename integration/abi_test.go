package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/loader"
)

// TestPluginABI builds the real gatehouse binary and real plugins that are wrong in every
// way the issue lists, and checks what `gatehouse plugin verify` says about each (the
// same pre-flight and trial load the server runs before it opens a plugin), what the
// serving process's Loader does with them, and that `gatehouse plugin build` builds an
// out-of-tree plugin that loads.
func TestPluginABI(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	b := newABIBuilds(t)
	host := abiContract(t, gatehouse)
	t.Run("verify", func(t *testing.T) { testVerify(t, gatehouse, b, host) })
	t.Run("loader", func(t *testing.T) { testLoader(t, gatehouse, b) })
	t.Run("build", func(t *testing.T) { testBuild(t, gatehouse, b) })
}

const (
	viaBuild   = "`gatehouse plugin build --module DIR --out DIR` builds with the host's settings"
	notOpened  = "  trial load skipped: the pre-flight found errors, so the plugin is not opened\n"
	goodConfig = `pluginAuth:
  name: required_header
  exportedSymbolName: Plugin
  config:
    RequiredHeader: x-required
    AllowedValues: [alpha]
`
	typoConfig = `pluginAuth:
  name: required_header
  exportedSymbolName: Plugin
  config:
    RequiredHeader: x-required
    AllowedValue: [alpha]
`
)

// Plugins shared by the subtests.
var (
	requiredHeader = abiPlugin{name: "required_header", pkg: "./plugins/required_header"}
	testdataPlugin = func(name string) abiPlugin {
		return abiPlugin{name: name, pkg: "./integration/testdata/plugins/" + name}
	}
)

func testVerify(t *testing.T, gatehouse string, b *abiBuilds, host *loader.Contract) {
	hostGo := host.GoVersion
	hostSys, ok := host.Module("golang.org/x/sys")
	if !ok || hostSys.Version == "v0.50.0" {
		t.Fatalf("the host links golang.org/x/sys %q; testdata/plugins/depversion must require another version than the host's", hostSys.Version)
	}
	configs := t.TempDir()
	abiWrite(t, filepath.Join(configs, "good.yaml"), goodConfig)
	abiWrite(t, filepath.Join(configs, "typo.yaml"), typoConfig)
	notELF := filepath.Join(configs, "notes.so")
	abiWrite(t, notELF, "TODO: build the plugin\n")

	tests := []struct {
		name   string
		plugin func(t *testing.T) string
		args   []string
		code   int
		// want is the whole output, with FILE standing for the plugin's path; or its
		// first lines when prefix is set.
		want   string
		prefix bool
	}{
		{
			name:   "the sample plugin loads",
			plugin: func(t *testing.T) string { return b.build(t, requiredHeader) },
			want:   "FILE: loads (symbol Plugin: main.requiredHeaderPlugin, config *main.Config)\n",
		},
		{
			name:   "the sample plugin with its step config",
			plugin: func(t *testing.T) string { return b.build(t, requiredHeader) },
			args:   []string{"--config", filepath.Join(configs, "good.yaml")},
			want:   "FILE: loads (symbol Plugin: main.requiredHeaderPlugin, config *main.Config)\n",
		},
		{
			name:   "unknown config field",
			plugin: func(t *testing.T) string { return b.build(t, requiredHeader) },
			args:   []string{"--config", filepath.Join(configs, "typo.yaml")},
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load (config decode): config: unknown field \"AllowedValue\" (config type main.Config); fix: change the step's config to match the plugin's config type, or the config type to accept it\n",
		},
		{
			name: "a shared dependency at another version",
			plugin: func(t *testing.T) string {
				return b.build(t, abiPlugin{name: "depversion", pkg: ".", dir: filepath.Join(b.root, "integration/testdata/plugins/depversion"), env: []string{"GOFLAGS=-mod=mod"}})
			},
			code: 1,
			want: "FILE: refused, 1 error\n" +
				"  error   module golang.org/x/sys: host " + hostSys.Version + ", plugin v0.50.0; shared package golang.org/x/sys/unix differs; fix: go mod edit -require=golang.org/x/sys@" + hostSys.Version + " && go mod tidy, then rebuild; " + viaBuild + " (it pins every shared module)\n" +
				notOpened,
		},
		{
			name: "-trimpath on the plugin only",
			plugin: func(t *testing.T) string {
				return b.build(t, abiPlugin{name: "trimpath", pkg: requiredHeader.pkg, args: []string{"-trimpath"}})
			},
			code: 1,
			want: "FILE: refused, 1 error\n" +
				"  error   -trimpath: host false, plugin true; fix: rebuild without -trimpath; " + viaBuild + "\n" + notOpened,
		},
		{
			name: "-race",
			plugin: func(t *testing.T) string {
				return b.build(t, abiPlugin{name: "race", pkg: requiredHeader.pkg, args: []string{"-race"}})
			},
			code: 1,
			want: "FILE: refused, 1 error\n" +
				"  error   -race: host false, plugin true; fix: rebuild without -race; " + viaBuild + "\n" + notOpened,
		},
		{
			name: "-gcflags=all=-N -l",
			plugin: func(t *testing.T) string {
				return b.build(t, abiPlugin{name: "gcflags", pkg: requiredHeader.pkg, args: []string{"-gcflags=all=-N -l"}})
			},
			code: 1,
			want: "FILE: refused, 1 error\n" +
				"  error   -gcflags: host (none), plugin all=-N -l; fix: rebuild without -gcflags; " + viaBuild + "\n" + notOpened,
		},
		{
			name:   "Go 1.25",
			plugin: func(t *testing.T) string { return go125(t, b) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   go version: host " + hostGo + ", plugin go1.25.0; opening a plugin of another Go release can crash the whole process, so it is never opened; fix: rebuild with " + hostGo + ": " + viaBuild + ", or `GOTOOLCHAIN=" + hostGo + " go build -buildmode=plugin …`\n" +
				notOpened,
		},
		{
			name:   "missing symbol",
			plugin: func(t *testing.T) string { return b.build(t, testdataPlugin("nosymbol")) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load (lookup): no exported symbol \"Plugin\" (it exports Other); fix: export a package-level variable Plugin from the plugin's main package (`var Plugin pluginapi.ExtAuthPlugin = myPlugin{}`), or set exportedSymbolName (verify: --symbol) to the name of the variable it exports\n",
		},
		{
			name:   "symbol of the wrong type",
			plugin: func(t *testing.T) string { return b.build(t, testdataPlugin("wrongtype")) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load (lookup): symbol \"Plugin\" has type *main.halfPlugin, which does not implement pluginapi.ExtAuthPlugin (NewConfigInstance and GetAuthService); fix: declare it as `var Plugin pluginapi.ExtAuthPlugin = myPlugin{}`, where myPlugin has the methods NewConfigInstance(context.Context) (any, error) and GetAuthService(context.Context, any) (pluginapi.AuthService, error)\n",
		},
		{
			name:   "non-pointer config instance",
			plugin: func(t *testing.T) string { return b.build(t, testdataPlugin("nonpointer")) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load (config instance): NewConfigInstance returned main.Config, not a pointer, so no config can be decoded into it; fix: return a pointer to a new config value from NewConfigInstance, for example `return &Config{}, nil`\n",
		},
		{
			name:   "panic in init",
			plugin: func(t *testing.T) string { return b.build(t, testdataPlugin("initpanic")) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load: the plugin panicked while loading (init code runs when the plugin is opened); it printed:\n" +
				"          panic: initpanic: cannot reach the license server\n" +
				"          \n" +
				"          goroutine 1 [running]:\n" +
				"          gatehouse.dev/gatehouse/integration/testdata/plugins/initpanic.init.0()\n",
			prefix: true,
		},
		{
			name:   "hang in init",
			plugin: func(t *testing.T) string { return b.build(t, testdataPlugin("inithang")) },
			args:   []string{"--timeout", "2s"},
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   trial load: the plugin did not finish loading within 2s and was killed; fix: find what blocks in the plugin's init code (package-level variables, init functions) or NewConfigInstance; they must not wait on the network or a lock\n",
		},
		{
			name:   "truncated",
			plugin: func(t *testing.T) string { return truncated(t, b.build(t, requiredHeader)) },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   file: truncated: the file is SIZE bytes but its ELF headers describe at least FULL; fix: copy the file again; the plugin image's copier writes files atomically, so a half-written file means something else wrote it\n" +
				notOpened,
		},
		{
			name:   "not ELF",
			plugin: func(*testing.T) string { return notELF },
			code:   1,
			want: "FILE: refused, 1 error\n" +
				"  error   file: not an ELF file (it starts with \"TODO\"); fix: build the plugin with `go build -buildmode=plugin` (or `gatehouse plugin build`)\n" +
				notOpened,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			so := tt.plugin(t)
			r := abiRun(t, "", nil, gatehouse, append([]string{"plugin", "verify", so}, tt.args...)...)
			want := strings.ReplaceAll(tt.want, "FILE", so)
			if strings.Contains(want, "SIZE") {
				full, _ := os.Stat(strings.TrimSuffix(so, ".truncated"))
				want = strings.NewReplacer("SIZE", fmt.Sprint(full.Size()/2), "FULL", fmt.Sprint(full.Size())).Replace(want)
			}
			got := r.stdout
			if tt.prefix {
				got = abiFirstLines(got, strings.Count(want, "\n"))
			}
			if got != want || r.code != tt.code {
				t.Errorf("gatehouse plugin verify %s %v: exit %d, printed\n%s\nwant exit %d and\n%s\nstderr: %s", so, tt.args, r.code, r.stdout, tt.code, want, r.stderr)
			}
		})
	}
}

// go125 builds the go125 test plugin with Go 1.25, which the go command downloads
// through the module proxy the first time.
func go125(t *testing.T, b *abiBuilds) string {
	return b.build(t, abiPlugin{name: "go125", pkg: ".", dir: filepath.Join(b.root, "integration/testdata/plugins/go125"),
		env: []string{"GOTOOLCHAIN=go1.25.0"}})
}

// truncated writes the first half of so next to it, as an interrupted copy leaves it.
func truncated(t *testing.T, so string) string {
	data, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	path := so + ".truncated"
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
