package xds

import (
	"bytes"
	"slices"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// TestWireRoutesCopiesWhatIsServed: each step's wire route configuration, built from
// the previous step's bytes, is the one built from scratch and decodes to the route
// configuration: only the virtual hosts the previous step did not have are serialized.
func TestWireRoutesCopiesWhatIsServed(t *testing.T) {
	vh := map[string]*route.VirtualHost{}
	for _, name := range []string{"a", "b", "B", "c", "d", "x", "y"} {
		vh[name] = &route.VirtualHost{Name: name, Domains: []string{name + ".example.com"}}
	}
	list := func(names ...string) []*route.VirtualHost {
		out := make([]*route.VirtualHost, len(names))
		for i, n := range names {
			out[i] = vh[n]
		}
		return out
	}
	steps := []struct {
		name       string
		vhs        []*route.VirtualHost
		ignorePort bool // changes the rest of the route configuration
		serialized int  // virtual hosts serialized again
	}{
		{"first", list("a", "b", "c", "d"), false, 4},
		{"one replaced", list("a", "B", "c", "d"), false, 1},
		{"one removed", list("a", "B", "d"), false, 0},
		{"one added first", list("x", "a", "B", "d"), false, 1},
		{"one added last", list("x", "a", "B", "d", "y"), false, 1},
		{"the rest changed", list("x", "a", "B", "d", "y"), true, 0},
		{"reordered", list("d", "B", "a", "x", "y"), true, 0},
		{"the same twice", list("d", "d", "B"), true, 0},
		{"none", nil, false, 0},
		{"one again", list("a"), false, 1},
	}
	marshal := func(v *route.VirtualHost) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var prev *servedRecords
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rc := &route.RouteConfiguration{Name: "http", VirtualHosts: st.vhs, IgnorePortInHostMatching: st.ignorePort}
			calls := 0
			wireOf := func(v *route.VirtualHost) []byte {
				if prev != nil && slices.Contains(prev.vhs, v) {
					return nil // served: copied from the served bytes
				}
				calls++
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			wire, records, err := wireRoutes(rc, withoutVirtualHosts(rc), wireOf, prev)
			if err != nil {
				t.Fatal(err)
			}
			scratch, _, err := wireRoutes(rc, withoutVirtualHosts(rc), marshal, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, want := wire.ProtoReflect().GetUnknown(), scratch.ProtoReflect().GetUnknown()
			if !bytes.Equal(got, want) {
				t.Errorf("wire bytes differ from those built from scratch:\n got %x\nwant %x", got, want)
			}
			decoded := &route.RouteConfiguration{}
			if err := proto.Unmarshal(got, decoded); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(decoded, rc) {
				t.Errorf("wire bytes decode to %v, want %v", decoded, rc)
			}
			if calls != st.serialized {
				t.Errorf("%d virtual hosts serialized, want %d", calls, st.serialized)
			}
			prev = &servedRecords{vhs: st.vhs, raw: got, at: records}
		})
	}
}
