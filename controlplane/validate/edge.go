package validate

import (
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// Edge is the edge stage: every input resource with its statuses, and what serves.
// It is never modified once returned.
type Edge struct {
	// Resources are the input's resources, in its order, with their statuses.
	Resources []Resource `json:"resources"`
	// Problems are the input's problems (what could not be read).
	Problems []source.Problem `json:"problems,omitempty"`
	// Accepted is what serves, the input of the proxies stage.
	Accepted translate.Accepted `json:"-"`
	// AuthConfigs are the serving versions of the AuthConfigs, in key order.
	AuthConfigs []source.Resource `json:"-"`

	secrets map[string]*source.Resource // serving Secrets by id
	last    map[source.Key]source.Resource
	owners  map[string]string // lower-case domain → id of the VirtualService serving it
}

// Secret returns the serving Secret with id "<namespace>.<name>", or nil.
func (e *Edge) Secret(id string) *source.Resource { return e.secrets[id] }

// run is one validation: the input, what the previous edge remembered, and the state
// being built.
type run struct {
	in    *source.Input
	prev  *Edge
	cache *translate.Cache
	out   *Edge
	// ids in the input by kind, to tell "rejected" from "does not exist" in reasons.
	inInput  map[string]map[string]bool
	clusters map[string]*translate.Cluster // serving Upstreams by id
	acs      map[string]bool               // serving AuthConfigs by id
}

// Validate computes the edge stage of in. prev is the previous edge (nil at first):
// it holds the last accepted version of every resource. cache memoizes per-resource
// translation between runs; the caller brackets the run with cache.Begin and Sweep.
func Validate(in *source.Input, prev *Edge, cache *translate.Cache) *Edge {
	if prev == nil {
		prev = &Edge{}
	}
	r := &run{
		in: in, prev: prev, cache: cache,
		out: &Edge{
			Resources: make([]Resource, len(in.Resources)),
			Problems:  in.Problems,
			secrets:   map[string]*source.Resource{},
			last:      make(map[source.Key]source.Resource, len(in.Resources)),
		},
		inInput:  map[string]map[string]bool{},
		clusters: map[string]*translate.Cluster{},
		acs:      map[string]bool{},
	}
	byKind := map[string][]int{}
	for i := range in.Resources {
		res := &in.Resources[i]
		r.out.Resources[i] = Resource{Resource: *res}
		byKind[res.Kind] = append(byKind[res.Kind], i)
		if r.inInput[res.Kind] == nil {
			r.inInput[res.Kind] = map[string]bool{}
		}
		r.inInput[res.Kind][res.ID()] = true
	}
	// Kinds in reference order: what is referenced is decided before what references it.
	r.settings(byKind[apiv1.KindSettings])
	r.secrets(byKind[apiv1.KindSecret])
	r.upstreams(byKind[apiv1.KindUpstream])
	r.authConfigs(byKind[apiv1.KindAuthConfig])
	r.virtualServices(byKind[apiv1.KindVirtualService])
	return r.out
}

// accept records the version that serves for resource i and its status.
func (r *run) accept(i int, state State, why []string) {
	res := &r.out.Resources[i]
	res.Statuses = []Status{{State: state, Reasons: why, ReportedBy: ReportedBy}}
	res.Serving = res.Hash
	r.out.last[res.Key()] = res.Resource
}

// reject records resource i as Rejected; last is the version serving instead (nil
// when none does, then note says why).
func (r *run) reject(i int, why []string, last *source.Resource, note string) {
	res := &r.out.Resources[i]
	if prev, ok := r.prev.last[res.Key()]; ok {
		r.out.last[res.Key()] = prev // remembered while the resource exists
	}
	if last != nil {
		res.Serving = last.Hash
		note = noteLastServes
	}
	res.Statuses = []Status{{State: Rejected, Reasons: append(why, note), ReportedBy: ReportedBy}}
}

// lastAccepted is the last accepted version of resource i when it differs from the
// current one, or nil.
func (r *run) lastAccepted(i int) *source.Resource {
	res := &r.out.Resources[i]
	if l, ok := r.prev.last[res.Key()]; ok && l.Hash != res.Hash {
		return &l
	}
	return nil
}

func (r *run) missingNote(i int) string {
	if _, ok := r.prev.last[r.out.Resources[i].Key()]; ok {
		return noteNotServed
	}
	return noteNever
}
