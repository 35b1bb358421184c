package xds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/proto"
)

// streamSub is a delta stream's subscription of one type as the server keeps it:
// go-control-plane's, which is shown the wildcard alone, and the names callbacks.keepNames
// keeps beside it.
type streamSub struct {
	lib   stream.Subscription
	sub   subscription
	sets  *nameSets
	asked bool
}

// request applies req (a copy: the request itself stays as the client sent it) as the
// server does, and returns the request, the subscription and the name change a watch
// is created with.
func (s *streamSub) request(req *discovery.DeltaDiscoveryRequest) (*discovery.DeltaDiscoveryRequest, cachev3.Subscription, nameChange) {
	initial := req.GetInitialResourceVersions()
	req = proto.Clone(req).(*discovery.DeltaDiscoveryRequest)
	req.InitialResourceVersions = initial // the map go-control-plane's subscription starts with
	if !s.asked && len(req.GetResourceNamesSubscribe()) == 0 {
		req.ResourceNamesSubscribe = []string{"*"}
	}
	change := s.sets.apply(s.sub, req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	s.sub, change.first = change.subscription, !s.asked
	withoutNames(req)
	if !s.asked {
		s.lib = stream.NewDeltaSubscription(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe(), req.GetInitialResourceVersions(), false)
		s.asked = true
	} else {
		s.lib.UpdateResourceSubscriptions(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	}
	if s.lib.IsWildcard() != change.wildcard {
		panic("the wildcard kept beside go-control-plane's differs from its own")
	}
	return req, namedSubscription{Subscription: s.lib, names: change.names.m}, change
}

// firstRequest is what the server makes of a stream's first request: the request
// go-control-plane sees, its subscription, and the name change.
func firstRequest(sets *nameSets, req *discovery.DeltaDiscoveryRequest) (*discovery.DeltaDiscoveryRequest, cachev3.Subscription, nameChange) {
	s := &streamSub{sets: sets}
	return s.request(req)
}

// TestNamesFollowGoControlPlane applies random subscribe and unsubscribe requests to
// the names kept beside go-control-plane and to go-control-plane's own subscription:
// after every request both hold the same names, and the known versions the delta set
// makes of an unsubscription are the ones go-control-plane makes in place.
func TestNamesFollowGoControlPlane(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sets := newNameSets()
	name := func() string { return fmt.Sprintf("n%d", rng.IntN(12)) }
	for run := range 40 {
		var ref stream.Subscription
		s := &streamSub{sets: sets}
		for step := range 30 {
			req := &discovery.DeltaDiscoveryRequest{}
			for range rng.IntN(4) {
				req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, name())
			}
			for range rng.IntN(3) {
				req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, name())
			}
			if rng.IntN(8) == 0 {
				req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, "*")
			}
			if rng.IntN(10) == 0 {
				req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, "*")
			}
			if step == 0 && len(req.ResourceNamesSubscribe) == 0 {
				req.ResourceNamesSubscribe = []string{name()}
			}
			// The client holds some of what it subscribed to, and a name it did not.
			held := map[string]string{"other": "v0"}
			for n := range ref.SubscribedResources() {
				if rng.IntN(2) == 0 {
					held[n] = "v1"
				}
			}
			var sub cachev3.Subscription
			var change nameChange
			if step == 0 {
				req.InitialResourceVersions = held
				ref = stream.NewDeltaSubscription(req.ResourceNamesSubscribe, req.ResourceNamesUnsubscribe, maps.Clone(held), false)
				_, sub, change = s.request(req)
			} else {
				ref.SetReturnedResources(maps.Clone(held))
				s.lib.SetReturnedResources(maps.Clone(held))
				_, sub, change = s.request(req)
				ref.UpdateResourceSubscriptions(req.ResourceNamesSubscribe, req.ResourceNamesUnsubscribe)
			}
			if !maps.Equal(sub.SubscribedResources(), ref.SubscribedResources()) || sub.IsWildcard() != ref.IsWildcard() {
				t.Fatalf("run %d step %d: %v: names %v wildcard %v, go-control-plane %v %v", run, step, req,
					slices.Sorted(maps.Keys(sub.SubscribedResources())), sub.IsWildcard(), slices.Sorted(maps.Keys(ref.SubscribedResources())), ref.IsWildcard())
			}
			known, _ := unsubscribe(sub, change.unsubscribed)
			if !maps.Equal(known, ref.ReturnedResources()) {
				t.Fatalf("run %d step %d: %v: known %v, go-control-plane %v", run, step, req, known, ref.ReturnedResources())
			}
		}
	}
}

// TestStreamsWithTheSameNamesShareOneSet subscribes many streams to the same names in
// different orders and batches: they hold one set; a stream that then differs holds
// its own; a set no stream holds is forgotten.
func TestStreamsWithTheSameNamesShareOneSet(t *testing.T) {
	sets := newNameSets()
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("bench.svc-%05d", i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var held []*nameSet
	for range 20 {
		order := slices.Clone(names)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		cut := rng.IntN(len(order))
		c := sets.apply(subscription{}, order[:cut], nil)
		c = sets.apply(c.subscription, order[cut:], []string{"not subscribed"})
		held = append(held, c.names)
	}
	for i, s := range held {
		if s != held[0] {
			t.Fatalf("stream %d holds a set of its own", i)
		}
	}
	if len(held[0].m) != len(names) {
		t.Fatalf("the set holds %d names, want %d", len(held[0].m), len(names))
	}
	other := sets.apply(subscription{names: held[0]}, nil, names[:1]).names
	if other == held[0] || len(other.m) != len(names)-1 || len(held[0].m) != len(names) {
		t.Fatalf("unsubscribing made %d names (the shared set %d)", len(other.m), len(held[0].m))
	}
	if back := sets.apply(subscription{names: other}, names[:1], nil).names; back != held[0] {
		t.Fatal("subscribing again did not find the shared set")
	}
	held, other = nil, nil
	runtime.GC()
	sets.mu.Lock()
	sets.sweep()
	left := len(sets.sets)
	sets.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d sets are kept that no stream holds", left)
	}
}
