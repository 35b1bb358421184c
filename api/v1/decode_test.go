package v1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

const allKinds = `# every kind
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: plugin-auth
  namespace: gatehouse-system
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, beta]
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: default}
spec:
  virtualHost:
    domains: ["*"]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo}}}
        options: {extauth: {configRef: {name: plugin-auth, namespace: gatehouse-system}}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8090}]}}
---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec: {extauth: {requestTimeout: 1s}}
---
apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: gatehouse-system}
type: extauth.gatehouse.dev/oauth
data:
  client-secret: czNjcjN0
---
`

func TestAddDecodesEveryKind(t *testing.T) {
	set := &apiv1.Set{}
	if err := set.Add([]byte(allKinds), "all.yaml"); err != nil {
		t.Fatalf("Add: %v", err)
	}
	want := &apiv1.Set{
		AuthConfigs: []*apiv1.AuthConfig{{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.AuthConfigAPIVersion, Kind: apiv1.KindAuthConfig},
			Metadata: apiv1.Metadata{Name: "plugin-auth", Namespace: "gatehouse-system"},
			Spec: apiv1.AuthConfigSpec{Configs: []apiv1.AuthStep{{PluginAuth: &apiv1.PluginAuth{
				Name:               "required_header",
				ExportedSymbolName: "Plugin",
				Config:             json.RawMessage(`{"AllowedValues":["alpha","beta"],"RequiredHeader":"x-required"}`),
			}}}},
		}},
		VirtualServices: []*apiv1.VirtualService{{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.VirtualServiceAPIVersion, Kind: apiv1.KindVirtualService},
			Metadata: apiv1.Metadata{Name: "default", Namespace: apiv1.DefaultNamespace},
			Spec: apiv1.VirtualServiceSpec{VirtualHost: apiv1.VirtualHost{
				Domains: []string{"*"},
				Routes: []apiv1.Route{{
					Matchers:    []apiv1.Matcher{{Prefix: "/"}},
					RouteAction: &apiv1.RouteAction{Single: &apiv1.Destination{Upstream: &apiv1.Ref{Name: "echo"}}},
					Options: &apiv1.RouteOptions{Extauth: &apiv1.ExtauthOption{
						ConfigRef: &apiv1.Ref{Name: "plugin-auth", Namespace: "gatehouse-system"},
					}},
				}},
			}},
		}},
		Upstreams: []*apiv1.Upstream{{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream},
			Metadata: apiv1.Metadata{Name: "echo", Namespace: apiv1.DefaultNamespace},
			Spec:     apiv1.UpstreamSpec{Static: &apiv1.StaticUpstream{Hosts: []apiv1.Host{{Addr: "127.0.0.1", Port: 8090}}}},
		}},
		Settings: []*apiv1.Settings{{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindSettings},
			Metadata: apiv1.Metadata{Name: "default", Namespace: "gatehouse-system"},
			Spec:     apiv1.SettingsSpec{Extauth: &apiv1.ExtauthSettings{RequestTimeout: "1s"}},
		}},
		Secrets: []*apiv1.Secret{{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.SecretAPIVersion, Kind: apiv1.KindSecret},
			Metadata: apiv1.Metadata{Name: "oauth", Namespace: "gatehouse-system"},
			Type:     apiv1.OAuthSecretType,
			Data:     map[string][]byte{"client-secret": []byte("s3cr3t")},
		}},
	}
	if diff := cmp.Diff(want, set, cmpopts.IgnoreUnexported(apiv1.Set{})); diff != "" {
		t.Errorf("set (-want +got):\n%s", diff)
	}
}

// TestUnknownKindsAreReported: a document of a kind Gatehouse does not read (a typo
// such as VirtualServce, or a ConfigMap in the folder) was skipped without a word, and
// gatehouse check said OK. It is now a problem of its file, with a suggestion.
func TestUnknownKindsAreReported(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: gateway.gatehouse.dev/v1\nkind: VirtualServce\nmetadata: {name: x}\n", `in.yaml:1: kind "VirtualServce" (apiVersion "gateway.gatehouse.dev/v1") is not one Gatehouse reads (AuthConfig, VirtualService, Upstream, Settings, Secret); did you mean "VirtualService"?`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", `in.yaml:1: kind "ConfigMap" (apiVersion "v1") is not one Gatehouse reads (AuthConfig, VirtualService, Upstream, Settings, Secret)`},
	} {
		err := (&apiv1.Set{}).Add([]byte(tc.doc), "in.yaml")
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
	}
}

func TestAddErrors(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantErrs []string // one line of the joined error each, in order
		// what still decoded
		wantAuthConfigs []string
	}{
		{
			name: "unknown field names its own line and path, and the likely field",
			yaml: `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: good}
spec: {configs: [{pluginAuth: {name: a}}]}
---
# the second document starts after this comment
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: bad}
spec: {configz: []}
`,
			wantErrs:        []string{`in.yaml:10: AuthConfig default.bad: spec.configz: unknown field (did you mean configs?)`},
			wantAuthConfigs: []string{"default.good"},
		},
		{
			name: "unknown nested field",
			yaml: `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: bad}
spec: {configs: [{pluginAuth: {name: a, fileName: a.so}}]}
`,
			wantErrs: []string{`in.yaml:4: AuthConfig default.bad: spec.configs[0].pluginAuth.fileName: unknown field`},
		},
		{
			name: "unknown field of the extauth tls settings",
			yaml: `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: s}
spec: {extauth: {tls: {sdsDirectory: /etc/envoy}}}
`,
			wantErrs: []string{`in.yaml:4: Settings default.s: spec.extauth.tls.sdsDirectory: unknown field`},
		},
		{
			name: "known kind with another apiVersion",
			yaml: `apiVersion: gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: a}
---
apiVersion: gateway.solo.io/v1
kind: VirtualService
metadata: {name: b}
---
apiVersion: core.gatehouse.dev/v2
kind: Upstream
metadata: {name: c}
`,
			wantErrs: []string{
				`in.yaml:1: AuthConfig: apiVersion "gateway.gatehouse.dev/v1" is not served; use "enterprise.gateway.gatehouse.dev/v1"`,
				`in.yaml:5: VirtualService: apiVersion "gateway.solo.io/v1" is not served; use "gateway.gatehouse.dev/v1"`,
				`in.yaml:9: Upstream: apiVersion "core.gatehouse.dev/v2" is not served; use "core.gatehouse.dev/v1"`,
			},
		},
		{
			name: "missing name is reported at metadata",
			yaml: `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {namespace: x}
`,
			wantErrs: []string{`in.yaml:3: Settings: metadata.name is required`},
		},
		{
			name: "missing kind or apiVersion",
			yaml: `apiVersion: v1
metadata: {name: a}
---
kind: Secret
metadata: {name: b}
`,
			wantErrs: []string{
				`in.yaml:1: apiVersion and kind are required`,
				`in.yaml:4: apiVersion and kind are required`,
			},
		},
		{
			name:     "not a mapping",
			yaml:     "just a string\n",
			wantErrs: []string{`in.yaml:1: not a resource: want a mapping with apiVersion and kind, got a string`},
		},
		{
			name: "bad base64 in a Secret",
			yaml: `apiVersion: v1
kind: Secret
metadata: {name: s}
data: {client-secret: "not base64!"}
`,
			wantErrs: []string{`in.yaml:4: Secret default.s: data.client-secret: want a base64 string: illegal base64 data at input byte 3`},
		},
		{
			name: "invalid YAML stops reading but keeps what came before",
			yaml: `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: before}
spec: {configs: [{pluginAuth: {name: a}}]}
---
kind: Upstream
	metadata: {}
`,
			wantErrs:        []string{`in.yaml:7: document 2: yaml: found a tab character that violates indentation (in what starts on line 6)`},
			wantAuthConfigs: []string{"default.before"},
		},
		{
			name: "every bad document is reported and the good ones kept",
			yaml: `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: u}
spec: {static: {hosts: [{addr: a, prot: 1}]}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ok}
spec: {configs: [{pluginAuth: {name: a}}]}
---
apiVersion: example.com/v1
kind: Widget
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {}
`,
			wantErrs: []string{
				`in.yaml:4: Upstream default.u: spec.static.hosts[0].prot: unknown field (did you mean port?)`,
				`in.yaml:11: kind "Widget" (apiVersion "example.com/v1") is not one Gatehouse reads (AuthConfig, VirtualService, Upstream, Settings, Secret)`,
				`in.yaml:16: AuthConfig: metadata.name is required`,
			},
			wantAuthConfigs: []string{"default.ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := &apiv1.Set{}
			err := set.Add([]byte(tt.yaml), "in.yaml")
			if err == nil {
				t.Fatalf("Add: nil error, want %q", tt.wantErrs)
			}
			if diff := cmp.Diff(tt.wantErrs, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAuthConfigs, authConfigIDs(set)); diff != "" {
				t.Errorf("AuthConfigs decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func authConfigIDs(set *apiv1.Set) []string {
	var ids []string
	for _, ac := range set.AuthConfigs {
		ids = append(ids, ac.Metadata.ID())
	}
	return ids
}

func authConfig(name string) string {
	return "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: " + name +
		"}\nspec: {configs: [{pluginAuth: {name: p}}]}\n"
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		path      string // relative to the folder; "" is the folder itself
		wantIDs   []string
		wantErrs  []string // substrings of the error, each must appear
		wantNoErr bool
	}{
		{
			name: "folder: yaml and yml in name order, others ignored",
			files: map[string]string{
				"b.yml":             authConfig("b"),
				"a.yaml":            authConfig("a") + "---\n" + authConfig("a2"),
				"c.yaml":            authConfig("c"),
				"notes.txt":         "not: [yaml",
				"d.json":            `{"apiVersion": "enterprise.gateway.gatehouse.dev/v1"}`,
				".hidden.yaml":      authConfig("hidden"),
				"sub/inner.yaml":    authConfig("inner"),
				"..data/dot.yaml":   authConfig("dot"),
				"README.md":         "# resources",
				"x.yaml.swp":        "garbage",
				"e.YAML-not-really": "garbage",
			},
			wantIDs:   []string{"default.a", "default.a2", "default.b", "default.c"},
			wantNoErr: true,
		},
		{
			name:      "one file",
			files:     map[string]string{"only.txt": authConfig("only")},
			path:      "only.txt",
			wantIDs:   []string{"default.only"},
			wantNoErr: true,
		},
		{
			name: "every bad document of every file at once",
			files: map[string]string{
				"a.yaml": authConfig("a") + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nbogus: 1\n",
				"b.yaml": authConfig("b"),
				"c.yaml": "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {}\n",
			},
			wantIDs: []string{"default.a", "default.b"},
			wantErrs: []string{
				`a.yaml:9: Secret default.s: bogus: unknown field`,
				`c.yaml:3: Upstream: metadata.name is required`,
			},
		},
		{
			name:     "missing path",
			path:     "nope",
			wantErrs: []string{"resources: stat ", "nope: no such file or directory"},
		},
		{
			name:      "empty folder",
			wantNoErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			set, err := apiv1.Load(filepath.Join(dir, tt.path))
			if tt.wantNoErr {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
			} else {
				if err == nil {
					t.Fatalf("Load: nil error, want %q", tt.wantErrs)
				}
				for _, w := range tt.wantErrs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Load error %q does not contain %q", err, w)
					}
				}
			}
			if set == nil {
				if tt.wantIDs != nil {
					t.Fatalf("Load returned no set, want %v", tt.wantIDs)
				}
				return
			}
			if diff := cmp.Diff(tt.wantIDs, authConfigIDs(set)); diff != "" {
				t.Errorf("AuthConfigs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretValue(t *testing.T) {
	yaml := `apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: ns}
type: extauth.gatehouse.dev/oauth
data:
  client-secret: Y2xpZW50LXNlY3JldA==
  both: ZnJvbS1kYXRh
stringData:
  both: from-stringData
  plain: text
`
	set := &apiv1.Set{}
	if err := set.Add([]byte(yaml), "s.yaml"); err != nil {
		t.Fatalf("Add: %v", err)
	}
	sec := set.Secret("ns.oauth")
	if sec == nil {
		t.Fatalf("Secret(ns.oauth) = nil")
	}
	if set.Secret("default.oauth") != nil {
		t.Errorf("Secret(default.oauth) found a Secret of another namespace")
	}
	tests := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{key: apiv1.OAuthSecretKey, want: "client-secret", wantOK: true},
		{key: "both", want: "from-stringData", wantOK: true},
		{key: "plain", want: "text", wantOK: true},
		{key: "absent", want: "", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := sec.Value(tt.key)
			if string(got) != tt.want || ok != tt.wantOK {
				t.Errorf("Value(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPluginAuthDefaults(t *testing.T) {
	tests := []struct {
		name       string
		p          apiv1.PluginAuth
		wantFile   string
		wantSymbol string
	}{
		{name: "defaults", p: apiv1.PluginAuth{Name: "required_header"}, wantFile: "required_header.so", wantSymbol: "required_header"},
		{name: "file set", p: apiv1.PluginAuth{Name: "rh", PluginFileName: "other.so"}, wantFile: "other.so", wantSymbol: "rh"},
		{name: "symbol set", p: apiv1.PluginAuth{Name: "rh", ExportedSymbolName: "Plugin"}, wantFile: "rh.so", wantSymbol: "Plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.FileName(); got != tt.wantFile {
				t.Errorf("FileName() = %q, want %q", got, tt.wantFile)
			}
			if got := tt.p.SymbolName(); got != tt.wantSymbol {
				t.Errorf("SymbolName() = %q, want %q", got, tt.wantSymbol)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{name: "metadata", got: apiv1.Metadata{Name: "a", Namespace: "ns"}.ID(), want: "ns.a"},
		{name: "ref with namespace", got: apiv1.Ref{Name: "a", Namespace: "other"}.ID("ns"), want: "other.a"},
		{name: "ref defaults to the referrer's namespace", got: apiv1.Ref{Name: "a"}.ID("ns"), want: "ns.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("ID = %q, want %q", tt.got, tt.want)
			}
		})
	}
}
