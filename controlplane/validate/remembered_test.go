package validate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// TestRememberedVersionsAreDecodedOnlyWhenTheyDiffer: at a first run after a restart,
// a resource whose remembered version is its current content costs no decoding of the
// remembered one, and a resource edited meanwhile into a rejected version serves the
// remembered version, as a rejected live edit serves its last accepted one.
func TestRememberedVersionsAreDecodedOnlyWhenTheyDiffer(t *testing.T) {
	before := input(t, extauthUpstream, upstream("echo", 80), vs("web", "echo", false, "a.example"), vs("api", "echo", false, "b.example"))
	now := input(t, extauthUpstream, upstream("echo", 80), vs("web", "echo", false, "a.example"), vs("api", "nope", false, "b.example"))
	var decodedKeys []string
	v := validate.New()
	v.Remembered = func(k source.Key) (*source.Resource, bool) {
		decodedKeys = append(decodedKeys, k.String())
		return before.Resources.Get(k)
	}
	v.RememberedSame = func(r *source.Resource) bool {
		was, ok := before.Resources.Get(r.Key())
		return ok && was.Hash == r.Hash
	}
	e := v.Validate(now)
	if d := cmp.Diff([]string{"VirtualService default.api"}, decodedKeys); d != "" {
		t.Errorf("remembered versions decoded (-want +got):\n%s", d)
	}
	want := []string{
		"Upstream default.echo: Accepted (this)",
		"Upstream gatehouse-system.extauth: Accepted (this)",
		"VirtualService default.api: Rejected (last) spec.virtualHost.routes[0].routeAction.single.upstream: upstream default.nope does not exist | the last accepted version keeps serving",
		"VirtualService default.web: Accepted (this)",
	}
	if d := cmp.Diff(want, summary(e)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
}
