package pluginhost_test

import (
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// BenchmarkCheckResponse checks what a typical step answers: an allow with one header
// set, as plugins/required_header does, a deny with a response header, and the OIDC
// step's allow, which passes a ~1 KB ID token on.
func BenchmarkCheckResponse(b *testing.B) {
	for _, tc := range []struct {
		name string
		resp *pluginapi.AuthorizationResponse
	}{
		{"allow", pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true")},
		{"deny", pluginapi.Unauthenticated().WithResponseHeader("www-authenticate", `Bearer realm="example"`)},
		{"id-token", pluginapi.Allow().WithRequestHeader("x-id-token", idToken).WithRequestHeader("cookie", "theme=dark; other=1")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := pluginhost.CheckResponse(tc.resp, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// idToken is shaped as a signed JWT of ~1 KB: base64url segments and dots.
var idToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0." + strings.Repeat("eyJzdWIiOiJ1c2VyLTEyMyIsImF1ZCI6ImdhdGVob3VzZSJ9", 14) + "." + strings.Repeat("c2lnbmF0dXJlLWJ5dGVz", 17)
