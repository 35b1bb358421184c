package xdsclient

import (
	"maps"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// state is what the server has sent, per type URL. It outlives streams: it is what the
// next stream announces and what the handler is given after a delta.
type state map[string]*typeState

type typeState struct {
	resources map[string]*anypb.Any
	versions  map[string]string
}

func newState(types []string) state {
	s := state{}
	for _, t := range types {
		s[t] = &typeState{resources: map[string]*anypb.Any{}, versions: map[string]string{}}
	}
	return s
}

// apply records a delta response and reports whether its type is subscribed.
func (s state) apply(resp *discovery.DeltaDiscoveryResponse) (*typeState, bool) {
	ts, ok := s[resp.GetTypeUrl()]
	if !ok {
		return nil, false
	}
	for _, r := range resp.GetResources() {
		if r.GetResource() == nil {
			// A resource without a body only refreshes a TTL; nothing to hand on.
			continue
		}
		ts.resources[r.GetName()] = r.GetResource()
		ts.versions[r.GetName()] = r.GetVersion()
	}
	for _, name := range resp.GetRemovedResources() {
		delete(ts.resources, name)
		delete(ts.versions, name)
	}
	return ts, true
}

// snapshot is a copy of the current set, which the handler may keep.
func (ts *typeState) snapshot() map[string]*anypb.Any {
	return maps.Clone(ts.resources)
}
