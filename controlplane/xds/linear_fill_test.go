package xds_test

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// A linear cache is filled when its first state-of-the-world (or delta by name) watch
// comes, not on every Publish: the client gets what is served then, edits and removals
// published before it came included, and every edit after (a state-of-the-world
// response of this type carries what changed, not everything).
func TestALateStateOfTheWorldClientGetsEveryEdit(t *testing.T) {
	s := startServer(t)
	state := xdstest.Extauth(3)
	if err := s.Publish(xds.RoleExtauth, state); err != nil {
		t.Fatal(err)
	}
	edit := func(id string, n int) {
		t.Helper()
		state[xds.ExtAuthConfigType] = maps.Clone(state[xds.ExtAuthConfigType]) // a published map is never modified
		if n < 0 {
			delete(state[xds.ExtAuthConfigType], id)
		} else {
			state[xds.ExtAuthConfigType][id] = xdstest.ExtAuthConfig(id, n)
		}
		if err := s.Publish(xds.RoleExtauth, state); err != nil {
			t.Fatal(err)
		}
	}
	edit(xdstest.ID(1), 1)
	edit(xdstest.ID(2), -1)
	c := newSotw(t, s.addr, node("extauth-sotw", xds.RoleExtauth), xds.ExtAuthConfigType)
	check := func(step string, ids ...string) {
		t.Helper()
		r := c.next()
		got := map[string]*extauthConfig{}
		for _, a := range r.GetResources() {
			m := &extauthConfig{}
			if err := a.UnmarshalTo(m); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			got[m.GetConfigId()] = m
		}
		want := map[string]*extauthConfig{}
		for _, id := range ids {
			want[id] = state[xds.ExtAuthConfigType][id].(*extauthConfig)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: served (-want +got):\n%s", step, diff)
		}
		c.answer(r, r.GetVersionInfo(), "")
	}
	check("first response", xdstest.ID(0), xdstest.ID(1))
	edit(xdstest.ID(0), 2)
	check("after an edit", xdstest.ID(0))
	edit(xdstest.ID(3), 0)
	check("after an addition", xdstest.ID(3))
}
