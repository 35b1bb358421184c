package pluginhost_test

import (
	"testing"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// BenchmarkCheckResponse checks what a typical step answers: an allow with one header
// set, as plugins/required_header does, and a deny with a response header.
func BenchmarkCheckResponse(b *testing.B) {
	for _, tc := range []struct {
		name string
		resp *pluginapi.AuthorizationResponse
	}{
		{"allow", pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true")},
		{"deny", pluginapi.Unauthenticated().WithResponseHeader("www-authenticate", `Bearer realm="example"`)},
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
