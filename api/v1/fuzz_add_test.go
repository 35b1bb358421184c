package v1_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// FuzzAdd feeds Set.Add what a resource file may hold, hostile or not: it must return
// (resources or errors), never panic or exhaust the stack, whatever the nesting, the
// aliases or the size. The seeds are the attacks seen so far; `go test -fuzz FuzzAdd`
// looks for more.
func FuzzAdd(f *testing.F) {
	head := "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: u, namespace: ns}\n"
	for _, seed := range []string{
		head + "spec: {static: {hosts: [{addr: 127.0.0.1, port: 80}]}}\n",
		head + "spec: " + strings.Repeat("[", 2_000) + strings.Repeat("]", 2_000) + "\n",
		head + "spec: " + strings.Repeat("{a: ", 1_000) + "1" + strings.Repeat("}", 1_000) + "\n",
		"# é\n" + head + "spec: " + strings.Repeat("[", 12_000) + "\n",
		"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
		"apiVersion: gateway.gatehouse.dev/v1\nkind: VirtualServce\nmetadata: {name: x}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: ../../escape, namespace: ../..}\n",
		strings.Repeat("---\n", 1000),
		"\x00\xff\t: [",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s apiv1.Set
		_ = s.Add(data, "fuzz.yaml")
	})
}
