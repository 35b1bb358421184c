package pipeline

import (
	"fmt"
	"maps"
	"slices"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// lagBook holds the extauth replicas that had not acknowledged a new AuthConfig when
// its bound passed and its routes were published anyway: until each acknowledges it
// (or disconnects), the AuthConfig and every VirtualService naming it carry a Warning
// reported by that replica.
type lagBook struct {
	byID map[string][]string // config id → lagging replicas (node ids), sorted
}

// note records the replicas that lag on config id.
func (b *lagBook) note(id string, nodes []string) {
	if b.byID == nil {
		b.byID = map[string][]string{}
	}
	b.byID[id] = slices.Sorted(slices.Values(nodes))
}

// drop forgets config id: a new version is pending again, or it is no longer served.
func (b *lagBook) drop(id string) { delete(b.byID, id) }

// refresh keeps, of every lagging replica, those still connected without the config,
// as acked reports them, and says whether anything changed.
func (b *lagBook) refresh(acked func(func(node string, acked map[string]string))) bool {
	if len(b.byID) == 0 || acked == nil {
		return false
	}
	still := map[string]map[string]bool{}
	acked(func(node string, a map[string]string) {
		for id := range b.byID {
			if _, ok := a[id]; !ok {
				if still[id] == nil {
					still[id] = map[string]bool{}
				}
				still[id][node] = true
			}
		}
	})
	changed := false
	for id, nodes := range b.byID {
		kept := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return !still[id][n] })
		switch {
		case len(kept) == 0:
			delete(b.byID, id)
			changed = true
		case len(kept) != len(nodes):
			b.byID[id] = kept
			changed = true
		}
	}
	return changed
}

// statuses are the Warnings the lagging replicas report, by resource key: on each
// lagging AuthConfig, and on each VirtualService whose routes name one.
func (b *lagBook) statuses(edge *validate.Edge) map[string][]validate.Status {
	if len(b.byID) == 0 {
		return nil
	}
	out := map[string][]validate.Status{}
	for _, id := range slices.Sorted(maps.Keys(b.byID)) {
		for _, node := range b.byID[id] {
			out[apiv1.KindAuthConfig+" "+id] = append(out[apiv1.KindAuthConfig+" "+id], validate.Status{
				State: validate.Warning, ReportedBy: xds.RoleExtauth + "/" + node,
				Reasons: []string{"has not acknowledged this version within the bound; the routes naming it are served, and this replica denies them until it has it"}})
		}
	}
	for vh := range edge.Accepted.VirtualHosts.Values() {
		named := map[string]bool{}
		for _, rt := range vh.Routes {
			if rt.AuthConfig != "" && b.byID[rt.AuthConfig] != nil && !named[rt.AuthConfig] {
				named[rt.AuthConfig] = true
				for _, node := range b.byID[rt.AuthConfig] {
					out[apiv1.KindVirtualService+" "+vh.Name] = append(out[apiv1.KindVirtualService+" "+vh.Name], validate.Status{
						State: validate.Warning, ReportedBy: xds.RoleExtauth + "/" + node,
						Reasons: []string{fmt.Sprintf("routes name AuthConfig %s, which this extauth replica has not acknowledged within the bound; it denies them until it has it", rt.AuthConfig)}})
				}
			}
		}
	}
	return out
}

// apply returns edge with the lagging replicas' Warnings added to the resources they
// concern; edge itself when there are none. Like nackBook.apply, it never modifies an
// Edge.
func (b *lagBook) apply(edge *validate.Edge) *validate.Edge {
	st := b.statuses(edge)
	if len(st) == 0 {
		return edge
	}
	out := *edge
	resources := edge.Resources.Edit()
	for i, r := range edge.Resources.All() {
		if add := st[r.Kind+" "+r.ID()]; add != nil && r.Serving != "" {
			c := *r
			c.Statuses = append(slices.Clone(r.Statuses), add...)
			resources.Set(i, &c)
		}
	}
	out.Resources = resources.List()
	return &out
}

// clientStatuses is edge with the statuses the clients report: NACKs, and replicas
// lagging past the bound (p.mu held).
func (p *Pipeline) clientStatuses(edge *validate.Edge) *validate.Edge {
	return p.gate.clientStatuses(p.nacks.apply(edge))
}

// refreshLag brings the lagging replicas' Warnings in the edge stage up to date, after
// an acknowledgement or a release at the bound.
func (p *Pipeline) refreshLag() {
	if !p.gate.refreshLag() && !p.gate.lagging() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rawEdge != nil {
		p.stages.Edge = p.clientStatuses(p.rawEdge)
	}
}
