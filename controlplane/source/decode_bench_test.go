package source

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The files integration/bench writes for its control-plane section (integration/bench/controlplane/generate.go):
// one resource a file, in block YAML, as a user with one file per service keeps them.
func benchFiles(i int) map[string]string {
	return map[string]string{
		fmt.Sprintf("authconfig-%05d.yaml", i): fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: ac-%05[1]d
  namespace: bench
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [v0]
`, i),
		fmt.Sprintf("upstream-%05d.yaml", i): fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata:
  name: up-%05[1]d
  namespace: bench
spec:
  static:
    hosts:
      - addr: 10.%[2]d.%[3]d.%[4]d
        port: 8000
`, i, i>>16&255, i>>8&255, i&255),
		fmt.Sprintf("virtualservice-%05d.yaml", i): fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata:
  name: vs-%05[1]d
  namespace: bench
spec:
  virtualHost:
    domains: [vs-%05[1]d.example.com]
    routes:
      - matchers: [{prefix: /open-0}]
        routeAction: {single: {upstream: {name: up-%05[1]d, namespace: bench}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: up-%05[1]d, namespace: bench}}}
        options: {extauth: {configRef: {name: ac-%05[1]d, namespace: bench}}}
`, i),
	}
}

// BenchmarkDecode is one file of each kind integration/bench writes, decoded.
func BenchmarkDecode(b *testing.B) {
	for name, data := range benchFiles(7) {
		b.Run(name[:len(name)-len("-00007.yaml")], func(b *testing.B) {
			for b.Loop() {
				if _, probs := Decode([]byte(data), name); probs != nil {
					b.Fatal(probs)
				}
			}
		})
	}
}

// BenchmarkDecodeDir is the directory source's first read of n services' files (3n
// files, as integration/bench writes them): every file read and decoded, and the
// first Input. Run with -cpu 1 for the control plane as the bench pins it.
func BenchmarkDecodeDir(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		for i := range n {
			for name, data := range benchFiles(i) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("files=%d", 3*n), func(b *testing.B) {
			for b.Loop() {
				if d := newTestDir(b, dir); d.last.Resources.Len() != 3*n || len(d.last.Problems) > 0 {
					b.Fatalf("%d resources, problems %v", d.last.Resources.Len(), d.last.Problems)
				}
			}
		})
	}
}
