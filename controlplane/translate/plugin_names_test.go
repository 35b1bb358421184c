package translate_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// TestPluginNamesExtauthWouldRefuse: a pluginFileName with "../" or an absolute path,
// and an exportedSymbolName Go can never export (such as the lower-case step name it
// defaults to), were Accepted by the control plane and then NACKed by every extauth
// replica. The control plane rejects them, with the field path.
func TestPluginNamesExtauthWouldRefuse(t *testing.T) {
	for _, tt := range []struct{ name, step, wantErr string }{
		{"plain names", `{name: p, exportedSymbolName: Plugin, pluginFileName: p-v2.so}`, ""},
		{"a path out of the folder", `{name: p, exportedSymbolName: Plugin, pluginFileName: ../../tmp/evil.so}`, `spec.configs[0].pluginAuth.pluginFileName: "../../tmp/evil.so" must be a plain file name inside the plugin folder`},
		{"an absolute path", `{name: p, exportedSymbolName: Plugin, pluginFileName: /tmp/evil.so}`, `spec.configs[0].pluginAuth.pluginFileName: "/tmp/evil.so" must be a plain file name`},
		{"the default symbol, lower case", `{name: required_header}`, `spec.configs[0].pluginAuth.exportedSymbolName: is unset, so it defaults to the step's name "required_header", which Go can never export`},
		{"a symbol that is no identifier", `{name: p, exportedSymbolName: My-Plugin}`, `spec.configs[0].pluginAuth.exportedSymbolName: "My-Plugin" is not a name Go can export`},
		{"both, reported together", `{name: p, exportedSymbolName: plugin, pluginFileName: a/b.so}`, `pluginFileName: "a/b.so"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := &apiv1.Set{}
			doc := "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: a, namespace: ns}\nspec: {configs: [{pluginAuth: " + tt.step + "}]}\n"
			if err := set.Add([]byte(doc), "a.yaml"); err != nil {
				t.Fatal(err)
			}
			r := translate.ExtAuth(set)[0]
			switch {
			case tt.wantErr == "" && r.Err != nil:
				t.Fatal(r.Err)
			case tt.wantErr != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want %q", r.Err, tt.wantErr)
			case tt.name == "both, reported together" && !strings.Contains(r.Err.Error(), "exportedSymbolName"):
				t.Fatalf("error = %v, want both fields", r.Err)
			}
		})
	}
}
