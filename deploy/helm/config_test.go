package helm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/internal/version"
)

// twoAuthConfigs is config.authConfigs as a user writes it: a block scalar of documents.
const twoAuthConfigs = `
global:
  extensions:
    extAuth:
      config:
        authConfigs: |
          apiVersion: enterprise.gateway.gatehouse.dev/v1
          kind: AuthConfig
          metadata: {name: first, namespace: team-a}
          spec: {configs: [{pluginAuth: {name: p, pluginFileName: p.so}}]}
          ---
          apiVersion: enterprise.gateway.gatehouse.dev/v1
          kind: AuthConfig
          metadata: {name: second}
          spec: {configs: [{pluginAuth: {name: p, pluginFileName: p.so}}]}
`

// TestConfigMapRendering checks extauth-config holds config.authConfigs as written, and
// that what it holds decodes as extauth decodes its --config.
func TestConfigMapRendering(t *testing.T) {
	tests := []struct {
		name   string
		values string
		// want is the AuthConfig ids the file decodes to; nil with noConfigMap.
		want        []string
		noConfigMap bool
	}{
		{name: "defaults: no AuthConfigs, still a file", want: []string{}},
		{name: "two AuthConfigs", values: twoAuthConfigs, want: []string{"team-a.first", "default.second"}},
		{name: "own ConfigMap: none rendered", values: "global: {extensions: {extAuth: {config: {configMap: mine}}}}", noConfigMap: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render(t, tt.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if tt.noConfigMap {
				if r.configMap != nil {
					t.Errorf("rendered ConfigMap %s, want none", r.configMap.Name)
				}
				return
			}
			cm := r.configMap
			if cm == nil {
				t.Fatal("no ConfigMap rendered")
			}
			if cm.Name != "extauth-config" || cm.Namespace != "auth" || cm.Labels["gatehouse"] != "extauth" ||
				cm.Labels["app.kubernetes.io/instance"] != "gh" || cm.Labels["app.kubernetes.io/version"] != version.Version {
				t.Errorf("ConfigMap metadata = %+v", cm.ObjectMeta)
			}
			if len(cm.Data) != 1 || len(cm.BinaryData) != 0 {
				t.Errorf("ConfigMap data keys = %v, want only authconfigs.yaml", cm.Data)
			}
			data, ok := cm.Data["authconfigs.yaml"]
			if !ok {
				t.Fatalf("ConfigMap has no authconfigs.yaml: %v", cm.Data)
			}
			if strings.TrimSpace(data) == "" {
				t.Error("authconfigs.yaml is empty; extauth needs a file it can read")
			}
			set := &apiv1.Set{}
			if err := set.Add([]byte(data), "authconfigs.yaml"); err != nil {
				t.Fatalf("authconfigs.yaml does not decode: %v\n%s", err, data)
			}
			got := []string{}
			for _, ac := range set.AuthConfigs {
				got = append(got, ac.Metadata.ID())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AuthConfigs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigMapKeepsAuthConfigsVerbatim guards the quoting: the ConfigMap must hold the
// exact string given, whatever its indentation, blank lines and trailing spaces.
func TestConfigMapKeepsAuthConfigsVerbatim(t *testing.T) {
	for _, in := range []string{"a: 1\n", "  indented: first\nb: 2", "x: 1\n\n\ny: 'two'  \n", "k: \"{{ not a template }}\"\n"} {
		r, err := render(t, `global: {extensions: {extAuth: {config: {authConfigs: `+quoteYAML(in)+`}}}}`)
		if err != nil {
			t.Fatalf("render %q: %v", in, err)
		}
		if got := r.configMap.Data["authconfigs.yaml"]; got != in {
			t.Errorf("authconfigs.yaml = %q, want %q", got, in)
		}
	}
}

// quoteYAML is s as a double-quoted YAML scalar.
func quoteYAML(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
