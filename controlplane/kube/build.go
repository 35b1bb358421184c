package kube

import (
	"slices"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// build makes one complete Input of what the informers hold: from the last one when
// only VirtualServices and AuthConfigs changed since (buildChanged), else anew
// (buildAll).
func (s *Source) build() *source.Input {
	s.dirtyMu.Lock()
	dirty, all := s.dirty, s.dirtyAll
	s.dirty, s.dirtyAll = nil, false
	s.dirtyMu.Unlock()
	if s.last != nil && !all {
		if in, ok := s.buildChanged(dirty); ok {
			return in
		}
	}
	return s.buildAll()
}

// buildChanged is the last Input with the VirtualServices and AuthConfigs of dirty
// converted again (or gone), sharing every other resource and problem: an edit costs
// what it touches, not a pass over them all and a sort. It
// is false when anything else changed: what the other kinds take part in (the Settings'
// and Upstreams' in discovery, the Services' and EndpointSlices' in endpoints) is made
// again by buildAll. Nothing VirtualServices and AuthConfigs are converted to depends on
// another object.
func (s *Source) buildChanged(dirty map[source.Key]bool) (*source.Input, bool) {
	for key := range dirty {
		if key.Kind != apiv1.KindVirtualService && key.Kind != apiv1.KindAuthConfig {
			return nil, false
		}
	}
	last := s.last
	in := &source.Input{Source: s.Name()}
	origins := map[string]bool{}
	var put []*source.Resource
	var remove []source.Key
	gens := map[source.Key]int64{}
	var problems []source.Problem
	for key := range dirty {
		k, _ := kindOf(key)
		origins[Origin(k.Kind, key.Namespace, key.Name)] = true
		u := s.inf.customResource(k.GVR, key.Namespace, key.Name)
		if u == nil {
			remove = append(remove, key) // deleted from the cluster
			delete(s.converted, key)
			continue
		}
		res, gen, problem := s.convert(k, u)
		if problem != nil {
			problems = append(problems, *problem)
		}
		if res == nil {
			remove = append(remove, key)
			continue
		}
		put = append(put, res)
		gens[key] = gen
	}
	for _, p := range last.Problems {
		if !origins[p.Origin] {
			in.Problems = append(in.Problems, p)
		}
	}
	in.Problems = append(in.Problems, problems...)
	in.Resources = last.Resources.WithShared(put, remove)
	s.mu.Lock()
	for _, key := range remove {
		delete(s.generations, key)
	}
	for key, gen := range gens {
		s.generations[key] = gen
	}
	s.last = in
	s.incremental++
	s.mu.Unlock()
	return in, true
}

// buildAll makes one complete Input of what the informers hold. Its resources are those
// of the Input before wherever they did not change (the converted objects', or the
// same version of a Secret or a discovered Upstream): validation keeps the resources
// of the Input a version arrived in, so a resource copied into each Input's list would
// keep that whole list alive.
func (s *Source) buildAll() *source.Input {
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
	// Keys are unique, so an unstable sort orders them the same, without
	// SortStableFunc's in-place merges.
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
