package source_test

import (
	"testing"

	"gatehouse.dev/gatehouse/controlplane/source"
)

const hashUpstream = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: default}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: 8081}]
`

// TestDecodeHash holds the content hashes Decode gives: equal text, equal hash, in any
// file; other text, another hash, even when only a comment differs (a file of one
// resource is hashed as its text); and in a file of several resources each one's hash
// is source.Hash of its object, as the Kubernetes source computes it.
func TestDecodeHash(t *testing.T) {
	decode := func(t *testing.T, text, origin string) []source.Resource {
		t.Helper()
		rs, problems := source.Decode([]byte(text), origin)
		if len(problems) > 0 {
			t.Fatalf("Decode(%s): %v", origin, problems)
		}
		return rs
	}
	one := decode(t, hashUpstream, "a.yaml")
	if len(one) != 1 {
		t.Fatalf("Decode gave %d resources, want 1", len(one))
	}
	h := one[0].Hash
	if got := decode(t, hashUpstream, "b.yaml")[0].Hash; got != h {
		t.Errorf("the same text in another file hashes %s, want %s", got, h)
	}
	if got := decode(t, "# a comment\n"+hashUpstream, "a.yaml")[0].Hash; got == h {
		t.Errorf("text with a comment added hashes %s, the same as before", got)
	}
	other := decode(t, hashUpstream[:len(hashUpstream)-len("8081}]\n")]+"8082}]\n", "a.yaml")[0]
	if other.Hash == h {
		t.Errorf("another port hashes %s, the same as before", other.Hash)
	}

	two := decode(t, hashUpstream+"---\n"+hashUpstream[:len(hashUpstream)-len("8081}]\n")]+"8082}]\n", "two.yaml")
	if len(two) != 2 {
		t.Fatalf("Decode of two documents gave %d resources, want 2", len(two))
	}
	for _, r := range two {
		if want := source.Hash(r.APIVersion, r.Kind, r.Object); r.Hash != want {
			t.Errorf("%s in a file of two hashes %s, want source.Hash %s", r.Key(), r.Hash, want)
		}
	}
	if two[0].Hash == two[1].Hash {
		t.Errorf("two different resources hash the same: %s", two[0].Hash)
	}
}
