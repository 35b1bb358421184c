package xds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"github.com/google/go-cmp/cmp"
)

// TestNamedWatchesAnswerAsLinearCache follows delta clients that subscribe by name
// (as a gateway proxy does to endpoints and route configurations) and one that
// subscribes to everything, through random publishes, removals and subscription
// changes, once against go-control-plane's LinearCache and once against a deltaSet,
// with the same subscriptions: every step, both send the same resources (names,
// versions and bytes), the same removals and the same next known versions, or both
// send nothing.
func TestNamedWatchesAnswerAsLinearCache(t *testing.T) {
	const typ = EndpointType
	rng := rand.New(rand.NewPCG(7, 8))
	lc := cachev3.NewLinearCache(typ, cachev3.WithVersionPrefix("p-"))
	var handed handedTables
	ds := newDeltaSet(typ, "p-", &handed)
	publish := func(upsert map[string]types.Resource, remove []string) {
		t.Helper()
		wires := map[string]wireResource{}
		for name, res := range upsert {
			sv, err := newServed(typ, name, res)
			if err != nil {
				t.Fatal(err)
			}
			wires[name] = sv.wireResource()
		}
		if err := lc.UpdateResources(upsert, remove); err != nil {
			t.Fatal(err)
		}
		if err := ds.update(wires, remove); err != nil {
			t.Fatal(err)
		}
	}
	name := func(i int) string { return fmt.Sprintf("bench.svc-%05d", i) }
	first := map[string]types.Resource{}
	for i := range 60 {
		first[name(i)] = endpoints(name(i), 9000+i)
	}
	publish(first, nil)

	type client struct {
		subL, subD stream.Subscription
		chL, chD   chan cachev3.DeltaResponse
		cancelL    func()
		cancelD    func()
		nonce      int
		table      bool // deltaSet's last response gave a version table
	}
	// watch asks both again. Names unsubscribed from are kept from go-control-plane
	// (and handed to the set) when the set's subscription holds a version table, as
	// callbacks.keepTablesWhole does.
	watch := func(c *client, subscribe, unsubscribe []string) {
		t.Helper()
		for _, cancel := range []func(){c.cancelL, c.cancelD} {
			if cancel != nil {
				cancel()
			}
		}
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: typ, ResourceNamesSubscribe: subscribe, ResourceNamesUnsubscribe: unsubscribe}
		if c.nonce > 0 {
			req.ResponseNonce = fmt.Sprint(c.nonce)
		}
		var err error
		if c.cancelL, err = lc.CreateDeltaWatch(req, c.subL, c.chL); err != nil {
			t.Fatal(err)
		}
		reqD, taken := req, []string(nil)
		if c.table && len(unsubscribe) > 0 {
			reqD = &discovery.DeltaDiscoveryRequest{TypeUrl: typ, ResourceNamesSubscribe: subscribe, ResponseNonce: req.ResponseNonce}
			taken = unsubscribe
		}
		if c.cancelD, err = ds.createWatch(reqD, c.subD, c.chD, taken); err != nil {
			t.Fatal(err)
		}
	}
	newClient := func(names []string) *client {
		c := &client{subL: stream.NewDeltaSubscription(names, nil, nil, false), subD: stream.NewDeltaSubscription(names, nil, nil, false),
			chL: make(chan cachev3.DeltaResponse, 1), chD: make(chan cachev3.DeltaResponse, 1)}
		watch(c, names, nil)
		return c
	}
	var clients []*client
	for i := range 6 {
		var names []string
		for j := range 80 {
			if rng.IntN(3) == 0 || i == 0 {
				names = append(names, name(j))
			}
		}
		if i == 5 {
			names = []string{"*"}
		}
		clients = append(clients, newClient(names))
	}
	// settle takes what both sent each client, compares it, and ACKs it as the server
	// does (the next known versions become the subscription's).
	settle := func(step int) {
		t.Helper()
		for i, c := range clients {
			var rl, rd cachev3.DeltaResponse
			select {
			case rl = <-c.chL:
			default:
			}
			select {
			case rd = <-c.chD:
			default:
			}
			if (rl == nil) != (rd == nil) {
				t.Fatalf("step %d client %d: LinearCache sent %v, deltaSet %v", step, i, rl != nil, rd != nil)
			}
			if rl == nil {
				continue
			}
			if diff := cmp.Diff(summary(t, rl), summary(t, rd)); diff != "" {
				t.Fatalf("step %d client %d: responses differ (-LinearCache +deltaSet):\n%s", step, i, diff)
			}
			c.subL.SetReturnedResources(rl.GetNextVersionMap())
			c.subD.SetReturnedResources(rd.GetNextVersionMap())
			resp, _ := rd.GetDeltaDiscoveryResponse()
			c.table = handed.take(resp) != nil
			c.nonce++
			var sub, unsub []string
			if rng.IntN(4) == 0 && i != 5 {
				sub, unsub = []string{name(rng.IntN(80))}, []string{name(rng.IntN(80))}
				c.subL.UpdateResourceSubscriptions(sub, unsub)
				if c.table {
					c.subD.UpdateResourceSubscriptions(sub, nil)
				} else {
					c.subD.UpdateResourceSubscriptions(sub, unsub)
				}
			}
			watch(c, sub, unsub)
		}
	}
	for step := range 200 {
		settle(step)
		upsert := map[string]types.Resource{}
		var remove []string
		for range 1 + rng.IntN(4) {
			j := rng.IntN(80)
			if rng.IntN(5) == 0 {
				remove = append(remove, name(j))
			} else {
				upsert[name(j)] = endpoints(name(j), 9000+rng.IntN(1000))
			}
		}
		for _, n := range remove {
			delete(upsert, n)
		}
		publish(upsert, remove)
	}
	settle(200)
}

type responseSummary struct {
	Resources map[string]string // name → version
	Bytes     map[string]string // name → the resource's serialization
	Removed   []string
	Next      map[string]string
}

func summary(t *testing.T, r cachev3.DeltaResponse) responseSummary {
	t.Helper()
	resp, err := r.GetDeltaDiscoveryResponse()
	if err != nil {
		t.Fatal(err)
	}
	s := responseSummary{Resources: map[string]string{}, Bytes: map[string]string{}, Removed: slices.Sorted(slices.Values(resp.GetRemovedResources())), Next: maps.Clone(r.GetNextVersionMap())}
	for _, res := range resp.GetResources() {
		s.Resources[res.GetName()] = res.GetVersion()
		s.Bytes[res.GetName()] = string(res.GetResource().GetValue())
	}
	return s
}

// endpoints is a ClusterLoadAssignment of one address on port.
func endpoints(cluster string, port int) *endpoint.ClusterLoadAssignment {
	addr := &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{Address: "127.0.0.1",
		PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(port)}}}}
	return &endpoint.ClusterLoadAssignment{ClusterName: cluster, Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
		HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: addr}}}}}}}
}
