package xds

import (
	"runtime"
	"testing"
	"weak"
)

func TestAnAnsweredResponseIsNotKept(t *testing.T) {
	for _, tc := range []struct {
		name, nonce string
		rest        []string
	}{
		{"the last", "c", nil},
		{"one in the middle", "b", []string{"c"}},
		{"the first", "a", []string{"b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending := make([]sentResponse, 0, 4)
			for _, n := range []string{"a", "b", "c"} {
				pending = append(pending, sentResponse{nonce: n, removed: []string{"svc-" + n}})
			}
			array := weak.Make(&pending[0])
			answered, rest := settle(pending, tc.nonce)
			pending = nil
			if answered == nil || answered.nonce != tc.nonce || answered.removed[0] != "svc-"+tc.nonce {
				t.Fatalf("answered %+v, want the response of nonce %q", answered, tc.nonce)
			}
			var got []string
			for _, sr := range rest {
				got = append(got, sr.nonce)
			}
			if len(got) != len(tc.rest) || (len(got) > 0 && got[0] != tc.rest[0]) {
				t.Errorf("still pending %q, want %q", got, tc.rest)
			}
			runtime.GC()
			if array.Value() != nil {
				t.Errorf("the array of the answered responses is still reachable (through what is still pending, %d of them)", len(rest))
			}
			runtime.KeepAlive(rest)
		})
	}
	if answered, rest := settle([]sentResponse{{nonce: "a"}}, "z"); answered != nil || len(rest) != 1 {
		t.Errorf("an unknown nonce answered %v and left %d pending, want nil and 1", answered, len(rest))
	}
}
