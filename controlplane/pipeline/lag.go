package pipeline

import (
	"fmt"
	"maps"
	"slices"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// lagBook holds the clients that had not acknowledged what new routes name (an
// AuthConfig, a cluster) when the bound passed and the routes were published anyway:
// until each acknowledges it (or disconnects), the resource and every VirtualService
// whose routes name it carry a Warning reported by that client.
type lagBook struct {
	kind     string // of the resources the ids name: AuthConfig or Upstream
	reporter string // the clients' role, "<role>/<node id>" reports
	onRef    string // the Warning's reason on the resource
	onVS     string // on a VirtualService, with the resource's id for %s
	byID     map[string][]string
}

// lagBooks of the two gates.
var (
	extauthLag = lagBook{kind: apiv1.KindAuthConfig, reporter: xds.RoleExtauth,
		onRef: "has not acknowledged this version within the bound; the routes naming it are served, and this replica denies them until it has it",
		onVS:  "routes name AuthConfig %s, which this extauth replica has not acknowledged within the bound; it denies them until it has it"}
	proxyLag = lagBook{kind: apiv1.KindUpstream, reporter: xds.DefaultProxyRole,
		onRef: "has not acknowledged this cluster within the bound; the routes sending to it are served, and this proxy answers them 503 until it has it",
		onVS:  "routes send to Upstream %s, which this proxy has not acknowledged within the bound; it answers them 503 until it has it"}
)

// note records the clients that lag on id.
func (b *lagBook) note(id string, nodes []string) {
	if b.byID == nil {
		b.byID = map[string][]string{}
	}
	b.byID[id] = slices.Sorted(slices.Values(nodes))
}

// drop forgets id: a new version is pending again, or it is no longer served.
func (b *lagBook) drop(id string) { delete(b.byID, id) }

// refresh keeps, of every lagging client, those still connected without the id, as
// acked reports them, and says whether anything changed.
func (b *lagBook) refresh(acked func(func(node string, has func(string) bool))) bool {
	if len(b.byID) == 0 || acked == nil {
		return false
	}
	still := map[string]map[string]bool{}
	acked(func(node string, has func(string) bool) {
		for id := range b.byID {
			if !has(id) {
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

// statuses are the Warnings the lagging clients report, by "<kind> <id>": on each
// resource they lag on, and on each VirtualService whose routes name one (ref).
func (b *lagBook) statuses(edge *validate.Edge, ref func(*translate.Route) string) map[string][]validate.Status {
	if len(b.byID) == 0 {
		return nil
	}
	out := map[string][]validate.Status{}
	warn := func(key, node, reason string) {
		out[key] = append(out[key], validate.Status{State: validate.Warning, ReportedBy: b.reporter + "/" + node, Reasons: []string{reason}})
	}
	for _, id := range slices.Sorted(maps.Keys(b.byID)) {
		for _, node := range b.byID[id] {
			warn(b.kind+" "+id, node, b.onRef)
		}
	}
	for vh := range edge.Accepted.VirtualHosts.Values() {
		named := map[string]bool{}
		for _, rt := range vh.Routes {
			if id := ref(rt); id != "" && b.byID[id] != nil && !named[id] {
				named[id] = true
				for _, node := range b.byID[id] {
					warn(apiv1.KindVirtualService+" "+vh.Name, node, fmt.Sprintf(b.onVS, id))
				}
			}
		}
	}
	return out
}

// apply returns edge with the lagging replicas' Warnings added to the resources they
// concern; edge itself when there are none. Like nackBook.apply, it never modifies an
// Edge.
func (b *lagBook) apply(edge *validate.Edge, ref func(*translate.Route) string) *validate.Edge {
	st := b.statuses(edge, ref)
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
	return p.cgate.clientStatuses(p.gate.clientStatuses(p.nacks.apply(edge)))
}

// refreshLag brings the lagging replicas' Warnings in the edge stage up to date, after
// an acknowledgement or a release at the bound.
func (p *Pipeline) refreshLag() {
	changed := p.gate.refreshLag()
	changed = p.cgate.refreshLag() || changed
	if !changed && !p.gate.lagging() && !p.cgate.lagging() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rawEdge != nil {
		p.stages.Edge = p.clientStatuses(p.rawEdge)
	}
}
