package helm_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// rhAuthConfig is an AuthConfig named name whose one step runs plugins/required_header
// from file, allowing requests with x-required: alpha.
func rhAuthConfig(name, file string) string {
	return `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ` + name + `}
spec:
  configs:
    - pluginAuth:
        name: required_header
        pluginFileName: ` + file + `
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha]}
`
}

// indent indents every line of s by n spaces, to put YAML into a block scalar.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// TestRenderedExtauthRunsTheBinary runs the real gatehouse binary with the args and env
// of the rendered extauth container. The chart used to pass --xds-address, a flag the
// binary does not have, and no --config, which the binary requires: the pod crash
// looped on every install. Only the listen addresses and the two volume paths are
// swapped for the test's; the folders hold what the init containers and the ConfigMap
// would put there.
func TestRenderedExtauthRunsTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gatehouse and a plugin")
	}
	bin := testbin.Gatehouse(t)
	// What a plugin image ships; its init container copies it into /auth-plugins.
	plugin := testbin.Plugin(t, "./plugins/required_header", t.TempDir(), "required_header.so")
	allowed := map[string]string{"x-required": "alpha"}
	tests := []struct {
		name   string
		values string
		// userConfigMap is the data of the user's own ConfigMap, for config.configMap.
		userConfigMap map[string]string
		// plugin installs required_header.so, as a plugin image's init container would.
		plugin bool
		// wantStatuses is /auth-configs (id: state), checked when stats are on.
		wantStatuses map[string]string
		// wantAllowed are config_ids a request with x-required: alpha passes.
		wantAllowed []string
		wantLevel   string
	}{
		{
			name:         "defaults: no AuthConfigs",
			wantStatuses: map[string]string{},
			wantLevel:    "info",
		},
		{
			name: "AuthConfigs in values, a plugin image, debug logs",
			values: `
global:
  extensions:
    extAuth:
      plugins:
        samples: {image: {repository: my-org/gatehouse-plugins}}
      deployment: {logLevel: debug}
      config:
        authConfigs: |
` + indent(rhAuthConfig("good", "required_header.so")+"---\n"+rhAuthConfig("missing", "missing.so"), 10),
			plugin:       true,
			wantStatuses: map[string]string{"default.good": "Accepted", "default.missing": "Rejected"},
			wantAllowed:  []string{"default.good"},
			wantLevel:    "debug",
		},
		{
			name: "own ConfigMap at a path, stats off, warn logs",
			values: `
global:
  extensions:
    extAuth:
      plugins:
        samples: {image: {repository: my-org/gatehouse-plugins}}
      config: {configMap: auth-configs, path: /config/auth}
      deployment:
        logLevel: warn
        stats: {enabled: false}
`,
			userConfigMap: map[string]string{"good.yaml": rhAuthConfig("good", "required_header.so"), "README": "not YAML, skipped"},
			plugin:        true,
			wantAllowed:   []string{"default.good"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render(t, tt.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			data := tt.userConfigMap
			if data == nil {
				if r.configMap == nil {
					t.Fatal("the chart rendered no ConfigMap and the case gives none")
				}
				data = r.configMap.Data
			}
			pluginDir := t.TempDir()
			if tt.plugin {
				if len(r.deployment.Spec.Template.Spec.InitContainers) == 0 {
					t.Fatal("a plugin is installed but the chart renders no init container to copy it")
				}
				copyFile(t, plugin, filepath.Join(pluginDir, "required_header.so"))
			}
			pod := startExtauth(t, bin, r, pluginDir, mountConfigMap(t, data))
			pod.waitReady(t)
			for _, id := range tt.wantAllowed {
				if got := pod.check(t, id, allowed); got != code.Code_OK {
					t.Errorf("Check(%s) with x-required: alpha = %s, want OK", id, got)
				}
				if got := pod.check(t, id, nil); got != code.Code_PERMISSION_DENIED {
					t.Errorf("Check(%s) without x-required = %s, want PERMISSION_DENIED", id, got)
				}
			}
			switch {
			case pod.admin != "":
				testbin.Eventually(t, 10*time.Second, func() error {
					got, err := pod.statuses()
					if err != nil {
						return err
					}
					return diffErr("/auth-configs (-want +got)", cmp.Diff(tt.wantStatuses, got))
				})
				if got := pod.logLevel(t); got != tt.wantLevel {
					t.Errorf("GET /logging: level %q, want %q from the rendered LOG_LEVEL", got, tt.wantLevel)
				}
			case tt.wantStatuses != nil || tt.wantLevel != "":
				t.Error("the case checks the admin port, but the chart renders no --admin-listen")
			}
			if pod.proc.Exited() {
				t.Fatalf("extauth exited:\n%s", pod.proc.Output())
			}
		})
	}
}

// TestBinaryHasNoXDSAddressFlag is why the chart fails on
// global.extensions.extAuth.xdsAddress. When this test fails, the extauth xDS client
// has landed: pass --xds-address from the chart again and drop this test.
func TestBinaryHasNoXDSAddressFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gatehouse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Gatehouse(t), "extauth", "--config", t.TempDir(), "--listen", testbin.FreeAddr(t), "--xds-address", "gatehouse.auth.svc:9977")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unknown flag: --xds-address") {
		t.Errorf("gatehouse extauth --xds-address: err %v, output:\n%s\nwant it refused as an unknown flag", err, out)
	}
}
