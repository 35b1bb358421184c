package devgateway

import (
	"fmt"
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// vhdsResources is n VirtualHost resources of the route configuration "http", as new
// *anypb.Any each time; the first one's route has prefix.
func vhdsResources(t *testing.T, n int, prefix string) map[string]*anypb.Any {
	t.Helper()
	out := map[string]*anypb.Any{}
	for i := range n {
		p := "/"
		if i == 0 {
			p = prefix
		}
		vh := &routev3.VirtualHost{
			Name: fmt.Sprintf("http/ns.vh%d", i), Domains: []string{fmt.Sprintf("host%d.example.com", i)},
			Routes: []*routev3.Route{{
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "c"}}},
			}},
		}
		a := &anypb.Any{}
		if err := anypb.MarshalFrom(a, vh, proto.MarshalOptions{Deterministic: true}); err != nil {
			t.Fatal(err)
		}
		out[vh.Name] = a
	}
	return out
}

// TestVHDSParsesOnlyWhatChanged: a VirtualHost response keeps the parsed virtual host
// of every resource that is the very *anypb.Any of the last one or has its bytes; only
// the others are decoded and parsed.
func TestVHDSParsesOnlyWhatChanged(t *testing.T) {
	p := NewProxy(ProxyOptions{Log: zerolog.Nop()})
	t.Cleanup(p.Close)
	first := vhdsResources(t, 50, "/")
	for _, step := range []struct {
		name   string
		rs     map[string]*anypb.Any
		parsed []string // the resources parsed again
	}{
		{"first", first, nil},
		{"the same resources", first, nil},
		{"the same bytes", vhdsResources(t, 50, "/"), nil},
		{"one edited", vhdsResources(t, 50, "/v2"), []string{"http/ns.vh0"}},
		{"one added", vhdsResources(t, 51, "/v2"), []string{"http/ns.vh50"}},
	} {
		before := map[*vhostSpec]bool{}
		for _, h := range p.vhds {
			before[h.spec] = true
		}
		if err := p.Handle(resourcev3.VirtualHostType, step.rs); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if len(p.vhds) != len(step.rs) {
			t.Fatalf("%s: %d virtual hosts, want %d", step.name, len(p.vhds), len(step.rs))
		}
		var parsed []string
		for n, h := range p.vhds {
			if len(before) > 0 && !before[h.spec] {
				parsed = append(parsed, n)
			}
		}
		slices.Sort(parsed)
		if fmt.Sprint(parsed) != fmt.Sprint(step.parsed) {
			t.Errorf("%s: parsed again %v, want %v", step.name, parsed, step.parsed)
		}
	}
}
