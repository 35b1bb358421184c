package kube

import (
	"slices"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// build makes one complete Input of what the informers hold. Its resources are those
// of the Input before wherever they did not change (the converted objects', or the
// same version of a Secret or a discovered Upstream): validation keeps the resources
// of the Input a version arrived in, and a resource copied into each Input's list
// kept that whole list alive (at 10,000 VirtualServices created at once, ~200 MB of
// lists of earlier Inputs).
func (s *Source) build() *source.Input {
	in := &source.Input{Source: s.Name()}
	var all []*source.Resource
	gens := map[source.Key]int64{}
	live := map[source.Key]bool{}
	var settings []*apiv1.Settings
	userUpstreams := map[string]bool{} // "<namespace>.<name>"
	for _, k := range Kinds {
		for _, u := range s.inf.customResources(k.GVR) {
			res, gen, problem := s.convert(k, u)
			if problem != nil {
				in.Problems = append(in.Problems, *problem)
			}
			if res == nil {
				continue
			}
			live[res.Key()] = true
			gens[res.Key()] = gen
			switch obj := res.Object.(type) {
			case *apiv1.Settings:
				settings = append(settings, obj)
			case *apiv1.Upstream:
				userUpstreams[res.ID()] = true
				if obj.Spec.Kube != nil {
					res = s.shared(s.withEndpoints(*res, obj))
				}
			}
			all = append(all, res)
		}
	}
	for key := range s.converted {
		if !live[key] {
			delete(s.converted, key) // deleted from the cluster
		}
	}
	for _, sec := range s.inf.secretList() {
		all = append(all, s.shared(secretResource(sec)))
	}
	for _, r := range s.discover(discoverySettings(settings), userUpstreams) {
		all = append(all, s.shared(r))
	}
	// Keys are unique, so an unstable sort orders them the same (SortStableFunc's
	// in-place merges were 15% of the control plane's CPU at 10,000 VirtualServices).
	slices.SortFunc(all, func(a, b *source.Resource) int { return a.Key().Compare(b.Key()) })
	in.Resources = source.NewResourcesOf(all)
	s.mu.Lock()
	s.generations, s.last = gens, in
	s.mu.Unlock()
	return in
}

// shared is r, or the last Input's resource of its key when that is the same version
// (hash and origin): see build.
func (s *Source) shared(r source.Resource) *source.Resource {
	if s.last != nil {
		if old, ok := s.last.Resources.Get(r.Key()); ok && old.Hash == r.Hash && old.Origin == r.Origin {
			return old
		}
	}
	return &r
}

// discoverySettings are those of the Settings that applies: the first in
// namespace/name order, as validation picks it.
func discoverySettings(all []*apiv1.Settings) *apiv1.DiscoverySettings {
	var first *apiv1.Settings
	for _, st := range all {
		if first == nil || st.Metadata.ID() < first.Metadata.ID() {
			first = st
		}
	}
	if first == nil {
		return nil
	}
	return first.Spec.Discovery
}

// Generation returns the metadata.generation of the version of key in the last Input.
func (s *Source) Generation(key source.Key) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.generations[key]
	return g, ok
}
