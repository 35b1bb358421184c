package foundation_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const authConfigs = `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: plugin-auth, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha, beta]}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: two-step, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: stamp
        exportedSymbolName: Plugin
        config: {Header: x-stamp, Value: s1}
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-stamp, AllowedValues: [s1]}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: deny-first, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha]}
    - pluginAuth:
        name: faulty
        exportedSymbolName: Plugin
        config: {Mode: panic}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: panics, namespace: default}
spec:
  configs:
    - pluginAuth: {name: faulty, exportedSymbolName: Plugin, config: {Mode: panic}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: errors, namespace: default}
spec:
  configs:
    - pluginAuth: {name: faulty, exportedSymbolName: Plugin, config: {Mode: error}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: hangs, namespace: default}
spec:
  configs:
    - pluginAuth: {name: faulty, exportedSymbolName: Plugin, config: {Mode: hang, HangFor: 3s}}
---
# Other kinds in the same file are skipped by the extauth server.
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: ignored, namespace: default}
spec:
  virtualHost: {domains: ["*"], routes: []}
`

// verdict is the part of a CheckResponse the tests compare.
type verdict struct {
	RPC     code.Code
	HTTP    int               // denied responses only
	Body    string            // denied responses only
	Headers map[string]string // upstream headers set by an OK response
}

func verdictOf(r *authv3.CheckResponse) verdict {
	v := verdict{RPC: code.Code(r.GetStatus().GetCode())}
	if d := r.GetDeniedResponse(); d != nil {
		v.HTTP, v.Body = int(d.GetStatus().GetCode()), d.GetBody()
	}
	for _, h := range r.GetOkResponse().GetHeaders() {
		if v.Headers == nil {
			v.Headers = map[string]string{}
		}
		if h.GetAppendAction() != corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
			v.Headers[h.GetHeader().GetKey()] = "append:" + h.GetHeader().GetValue()
			continue
		}
		v.Headers[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
	}
	return v
}

var (
	allowedWithMatch = verdict{RPC: code.Code_OK, Headers: map[string]string{"matched-allowed-headers": "true"}}
	forbidden        = verdict{RPC: code.Code_PERMISSION_DENIED, HTTP: 403}
	failed           = verdict{RPC: code.Code_UNAVAILABLE, HTTP: 500}
)

func TestExtauthChains(t *testing.T) {
	ex := startExtauth(t, authConfigs)
	tests := []struct {
		name     string
		configID string
		headers  map[string]string
		want     verdict
	}{
		{"allowed value adds the plugin's header", "default.plugin-auth", map[string]string{"x-required": "alpha"}, allowedWithMatch},
		{"second allowed value", "default.plugin-auth", map[string]string{"x-required": "beta"}, allowedWithMatch},
		{"value outside AllowedValues is 403 with empty body", "default.plugin-auth", map[string]string{"x-required": "gamma"}, forbidden},
		{"missing header is 403", "default.plugin-auth", nil, forbidden},
		{"unknown config_id denies", "default.nope", map[string]string{"x-required": "alpha"}, forbidden},
		{"empty config_id denies", "", map[string]string{"x-required": "alpha"}, forbidden},
		{"step 2 sees the header step 1 set, and both headers reach upstream", "default.two-step", nil,
			verdict{RPC: code.Code_OK, Headers: map[string]string{"x-stamp": "s1", "matched-allowed-headers": "true"}}},
		{"a deny in step 1 stops the chain before the panicking step 2", "default.deny-first", map[string]string{"x-required": "nope"}, forbidden},
		{"step 2 runs after step 1 allows (and panics)", "default.deny-first", map[string]string{"x-required": "alpha"}, failed},
		{"panic in Authorize denies with 500", "default.panics", nil, failed},
		{"error from Authorize denies with 500", "default.errors", nil, failed},
		{"Authorize past the 200ms request timeout denies with 500", "default.hangs", nil, failed},
		{"the server still answers after failures", "default.plugin-auth", map[string]string{"x-required": "alpha"}, allowedWithMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictOf(ex.check(t, tt.configID, tt.headers))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("failures are logged with the request id and step", func(t *testing.T) {
		out := ex.proc.Output()
		for _, want := range []string{`"step":"step/faulty"`, `"request_id":"req-TestExtauthChains/panic_in_Authorize_denies_with_500"`, `faulty plugin panics on purpose`, `"stack":`} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %s", want)
			}
		}
	})
}

func TestExtauthReloadsConfigFromDisk(t *testing.T) {
	ex := startExtauth(t, authConfigs)
	if got := verdictOf(ex.check(t, "default.plugin-auth", map[string]string{"x-required": "alpha"})); !cmp.Equal(got, allowedWithMatch) {
		t.Fatalf("before the edit: %+v", got)
	}

	writeFile(t, ex.config, strings.Replace(authConfigs, "AllowedValues: [alpha, beta]", "AllowedValues: [gamma]", 1))
	testbin.Eventually(t, 5*time.Second, func() error {
		if got := verdictOf(ex.check(t, "default.plugin-auth", map[string]string{"x-required": "gamma"})); !cmp.Equal(got, allowedWithMatch) {
			return fmt.Errorf("gamma: %+v", got)
		}
		return nil
	})
	if got := verdictOf(ex.check(t, "default.plugin-auth", map[string]string{"x-required": "alpha"})); !cmp.Equal(got, forbidden) {
		t.Errorf("alpha after the edit: %+v, want 403", got)
	}

	t.Run("a bad edit is reported and the last good config keeps serving", func(t *testing.T) {
		writeFile(t, ex.config, strings.Replace(authConfigs, "AllowedValues: [alpha, beta]", "AllowedValue: [delta]", 1))
		testbin.Eventually(t, 5*time.Second, func() error {
			if !strings.Contains(ex.proc.Output(), `unknown field \"AllowedValue\"`) {
				return fmt.Errorf("no error logged for the bad edit")
			}
			return nil
		})
		if got := verdictOf(ex.check(t, "default.plugin-auth", map[string]string{"x-required": "gamma"})); !cmp.Equal(got, allowedWithMatch) {
			t.Errorf("gamma after the bad edit: %+v, want the previous config to keep serving", got)
		}
		if !strings.Contains(ex.proc.Output(), `"serving_previous":true`) {
			t.Errorf("the rejection does not say the previous version keeps serving")
		}
	})
}
