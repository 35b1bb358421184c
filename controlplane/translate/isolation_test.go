package translate_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// The per-step isolation settings of issue 12, finding 2: checked with field paths and
// carried into the ExtAuthConfig.
func TestPluginIsolation(t *testing.T) {
	tests := []struct {
		name, step string
		wantIso    string
		wantLimit  int64
		wantErr    string
	}{
		{name: "default", step: `{name: p, exportedSymbolName: Plugin}`},
		{name: "in process", step: `{name: p, exportedSymbolName: Plugin, isolation: inProcess}`},
		{name: "process with a limit", step: `{name: p, exportedSymbolName: Plugin, isolation: process, memoryLimit: 256Mi}`, wantIso: "process", wantLimit: 256 << 20},
		{name: "unknown", step: `{name: p, exportedSymbolName: Plugin, isolation: thread}`, wantErr: `spec.configs[0].pluginAuth.isolation: "thread" is not one of "inProcess", "process"`},
		{name: "limit in process", step: `{name: p, exportedSymbolName: Plugin, memoryLimit: 1Gi}`, wantErr: "spec.configs[0].pluginAuth.memoryLimit: applies only with isolation: process"},
		{name: "bad limit", step: `{name: p, exportedSymbolName: Plugin, isolation: process, memoryLimit: lots}`, wantErr: `spec.configs[0].pluginAuth.memoryLimit: "lots" is not a positive quantity`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := &apiv1.Set{}
			doc := "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: a, namespace: ns}\nspec: {configs: [{pluginAuth: " + tt.step + "}]}\n"
			if err := set.Add([]byte(doc), "a.yaml"); err != nil {
				t.Fatal(err)
			}
			r := translate.ExtAuth(set)[0]
			if tt.wantErr != "" {
				if r.Err == nil || !strings.Contains(r.Err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", r.Err, tt.wantErr)
				}
				return
			}
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			pa := r.Config.GetSteps()[0].GetPluginAuth()
			if pa.GetIsolation() != tt.wantIso || pa.GetMemoryLimitBytes() != tt.wantLimit {
				t.Errorf("isolation %q, memory limit %d; want %q, %d", pa.GetIsolation(), pa.GetMemoryLimitBytes(), tt.wantIso, tt.wantLimit)
			}
		})
	}
}
