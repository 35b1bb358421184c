package devgateway

import (
	"fmt"
	"reflect"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// memoRouteConfig is a route configuration of n virtual hosts, each with a route
// carrying ext_authz context extensions (a map, serialized deterministically as the
// control plane does), after extra; prefix is the first host's route prefix.
func memoRouteConfig(t *testing.T, n int, prefix string, extra ...*routev3.VirtualHost) *anypb.Any {
	t.Helper()
	rc := &routev3.RouteConfiguration{Name: "http", IgnorePortInHostMatching: true, VirtualHosts: extra}
	for i := range n {
		per := &anypb.Any{}
		err := anypb.MarshalFrom(per, &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{CheckSettings: &extauthzv3.CheckSettings{
			ContextExtensions: map[string]string{"config_id": fmt.Sprintf("ns.ac%d", i), "b": "2", "a": "1"}}}}, proto.MarshalOptions{Deterministic: true})
		if err != nil {
			t.Fatal(err)
		}
		p := "/"
		if i == 0 {
			p = prefix
		}
		rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{
			Name: fmt.Sprintf("vh%d", i), Domains: []string{fmt.Sprintf("host%d.example.com", i), fmt.Sprintf("*.h%d.example.com", i)},
			Routes: []*routev3.Route{{
				Match:                &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}},
				Action:               &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: fmt.Sprintf("c%d", i%3)}}},
				TypedPerFilterConfig: map[string]*anypb.Any{"envoy.filters.http.ext_authz": per},
			}},
		})
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &anypb.Any{TypeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration", Value: b}
}

// fullParse is the route configuration parsed whole, as without the memo.
func fullParse(t *testing.T, a *anypb.Any) (*routeSpec, problems) {
	t.Helper()
	rc := &routev3.RouteConfiguration{}
	if err := unpack(a, a.GetTypeUrl(), rc); err != nil {
		t.Fatal(err)
	}
	var pr problems
	return parseRouteConfig(rc, "", &pr), pr
}

// memoBookkeeping leaves out what only the memo sets: a spec's wire form and level,
// and the builds it keeps.
var memoBookkeeping = cmp.Options{
	cmpopts.IgnoreFields(routeSpec{}, "level"),
	cmpopts.IgnoreFields(vhostSpec{}, "wire", "built"),
}

// TestMemoParsesLikeTheWhole: a route configuration parsed with the virtual hosts of
// the last one reused is the one parsed whole, before and after an edit, an addition
// and a removal; only the changed virtual hosts are parsed again; and anything with a
// problem is left to the whole parse, which says what it is.
func TestMemoParsesLikeTheWhole(t *testing.T) {
	same := cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }), memoBookkeeping}
	memo := vhostMemo{}
	first := memoRouteConfig(t, 20, "/")
	for _, step := range []struct {
		name   string
		a      *anypb.Any
		reused int
	}{
		{"first", first, 0},
		{"unchanged", first, 20},
		{"first route edited", memoRouteConfig(t, 20, "/v2"), 19},
		{"one added", memoRouteConfig(t, 21, "/v2"), 20},
		{"two removed", memoRouteConfig(t, 19, "/v2"), 19},
	} {
		next := vhostMemo{}
		got, ok := parseRouteConfigMemo(step.a, "http", memo, next)
		want, pr := fullParse(t, step.a)
		if !ok || len(pr) > 0 {
			t.Fatalf("%s: memo ok %v, whole parse's problems %v", step.name, ok, pr)
		}
		if d := cmp.Diff(want, got, same); d != "" {
			t.Errorf("%s: memo parse differs from the whole parse (-whole +memo):\n%s", step.name, d)
		}
		reused := 0
		for _, v := range got.hosts {
			for _, old := range memo {
				if old == v {
					reused++
				}
			}
		}
		if reused != step.reused {
			t.Errorf("%s: %d virtual hosts reused, want %d", step.name, reused, step.reused)
		}
		memo = next
	}

	dup := &routev3.VirtualHost{Name: "dup", Domains: []string{"host3.example.com"}}
	bad := &routev3.VirtualHost{Name: "bad", Domains: []string{"a*b"}}
	for name, a := range map[string]*anypb.Any{
		"a reused virtual host's domain, first in a new one": memoRouteConfig(t, 19, "/v2", dup),
		"a wildcard in the middle":                           memoRouteConfig(t, 19, "/v2", bad),
		"not a route configuration":                          {TypeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster", Value: first.GetValue()},
	} {
		if _, ok := parseRouteConfigMemo(a, "http", memo, vhostMemo{}); ok {
			t.Errorf("%s: the memo parse took it; the whole parse must say what is wrong", name)
		}
	}
	if _, ok := parseRouteConfigMemo(first, "https", memo, vhostMemo{}); ok {
		t.Error("a route configuration under another name: the memo parse took it")
	}
}

// TestBuildsOfReusedVirtualHostsAreReused: the virtual hosts built for a listener from
// a configuration parsed with the memo are those built from the whole parse, and a
// virtual host whose spec and context are unchanged is not built again; another
// ext_authz name or an edited virtual host is.
func TestBuildsOfReusedVirtualHostsAreReused(t *testing.T) {
	same := cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }), memoBookkeeping}
	build := func(a *anypb.Any, memo vhostMemo, authz string) (got, want []*vhost, next vhostMemo) {
		t.Helper()
		next = vhostMemo{}
		s, ok := parseRouteConfigMemo(a, "http", memo, next)
		whole, pr := fullParse(t, a)
		if !ok || len(pr) > 0 {
			t.Fatalf("memo ok %v, whole parse's problems %v", ok, pr)
		}
		got, want = s.vhosts(authz, optionFilters{}), whole.vhosts(authz, optionFilters{})
		if d := cmp.Diff(want, got, same); d != "" {
			t.Fatalf("built from the memo parse differs from the whole parse (-whole +memo):\n%s", d)
		}
		return got, want, next
	}
	reusedOf := func(before, after []*vhost) int {
		n := 0
		for _, v := range after {
			for _, old := range before {
				if v == old {
					n++
				}
			}
		}
		return n
	}
	memo := vhostMemo{}
	first, _, memo := build(memoRouteConfig(t, 20, "/"), memo, "envoy.filters.http.ext_authz")
	again, _, memo := build(memoRouteConfig(t, 20, "/"), memo, "envoy.filters.http.ext_authz")
	if n := reusedOf(first, again); n != 20 {
		t.Errorf("unchanged: %d of 20 builds reused", n)
	}
	edited, _, memo := build(memoRouteConfig(t, 20, "/v2"), memo, "envoy.filters.http.ext_authz")
	if n := reusedOf(again, edited); n != 19 {
		t.Errorf("first route edited: %d builds reused, want 19", n)
	}
	other, _, _ := build(memoRouteConfig(t, 20, "/v2"), memo, "other")
	if n := reusedOf(edited, other); n != 0 {
		t.Errorf("another ext_authz name: %d builds reused, want 0", n)
	}
}
