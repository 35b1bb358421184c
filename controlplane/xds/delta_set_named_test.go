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
// with the same subscriptions (the deltaSet's kept as callbacks.keepNames keeps them):
// every step, both send the same resources (names, versions and bytes), the same
// removals and the same next known versions, or both send nothing, except that where
// an unsubscription drops a name the client held, the deltaSet sends an empty response
// to make what it holds the stream's, the map go-control-plane edits in place. The
// LinearCache's versions are SHA-256 hashes of the content: they are compared as the
// deltaSet's ContentVersion of the same content.
func TestNamedWatchesAnswerAsLinearCache(t *testing.T) {
	const typ = EndpointType
	rng := rand.New(rand.NewPCG(7, 8))
	lc := cachev3.NewLinearCache(typ, cachev3.WithVersionPrefix("p-"))
	var handed handedTables
	ds := newDeltaSet(typ, "p-", &handed)
	ours := map[string]string{} // the LinearCache's version of content → the deltaSet's
	publish := func(upsert map[string]types.Resource, remove []string) {
		t.Helper()
		wires := map[string]wireResource{}
		for name, res := range upsert {
			sv, err := newServed(typ, name, res)
			if err != nil {
				t.Fatal(err)
			}
			ours[cachev3.HashResource(sv.raw)] = sv.version()
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

	sets := newNameSets()
	dropped, tables := 0, 0
	type client struct {
		subL     stream.Subscription
		d        *streamSub
		chL, chD chan cachev3.DeltaResponse
		cancelL  func()
		cancelD  func()
		nonce    int
	}
	// watch asks both again.
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
		reqD, subD, change := c.d.request(req)
		if c.cancelD, err = ds.createWatch(reqD, subD, c.chD, change); err != nil {
			t.Fatal(err)
		}
		if len(c.chD) == 0 || len(c.chL) > 0 {
			return
		}
		// The deltaSet answered an unsubscription that dropped a name the client held;
		// the client acknowledges it and asks again.
		rd := <-c.chD
		if s := summary(t, rd); len(s.Resources) > 0 || len(s.Removed) > 0 || !maps.Equal(s.Next, responseSummary{Next: maps.Clone(c.subL.ReturnedResources())}.versionsAs(ours).Next) {
			t.Fatalf("LinearCache sent nothing, deltaSet %+v (LinearCache's client holds %v)", s, c.subL.ReturnedResources())
		}
		c.d.lib.SetReturnedResources(rd.GetNextVersionMap())
		dropped++
		ack := &discovery.DeltaDiscoveryRequest{TypeUrl: typ, ResponseNonce: "dropped"}
		reqD, subD, change = c.d.request(ack)
		if c.cancelD, err = ds.createWatch(reqD, subD, c.chD, change); err != nil {
			t.Fatal(err)
		}
	}
	newClient := func(names []string) *client {
		c := &client{subL: stream.NewDeltaSubscription(names, nil, nil, false), d: &streamSub{sets: sets},
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
			if diff := cmp.Diff(summary(t, rl).versionsAs(ours), summary(t, rd)); diff != "" {
				t.Fatalf("step %d client %d: responses differ (-LinearCache +deltaSet):\n%s", step, i, diff)
			}
			c.subL.SetReturnedResources(rl.GetNextVersionMap())
			c.d.lib.SetReturnedResources(rd.GetNextVersionMap())
			resp, _ := rd.GetDeltaDiscoveryResponse()
			if handed.take(resp) != nil {
				tables++
			}
			c.nonce++
			var sub, unsub []string
			if rng.IntN(4) == 0 && i != 5 {
				sub, unsub = []string{name(rng.IntN(80))}, []string{name(rng.IntN(80))}
				c.subL.UpdateResourceSubscriptions(sub, unsub)
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
	if dropped == 0 || tables == 0 {
		t.Fatalf("the run made %d empty responses for an unsubscription and %d responses with a version table; want some of each", dropped, tables)
	}
}

type responseSummary struct {
	Resources map[string]string // name → version
	Bytes     map[string]string // name → the resource's serialization
	Removed   []string
	Next      map[string]string
}

// versionsAs is s with each version that ours maps replaced by what it maps to.
func (s responseSummary) versionsAs(ours map[string]string) responseSummary {
	for _, m := range []map[string]string{s.Resources, s.Next} {
		for name, v := range m {
			if o, ok := ours[v]; ok {
				m[name] = o
			}
		}
	}
	return s
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
