package pipeline

import (
	"sort"
	"strings"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// maxNacks bounds the NACKs kept in Stages.
const maxNacks = 100

// nackStatus is a client's Rejected status on one version of a resource.
type nackStatus struct {
	hash   string // the serving version it concerns
	status validate.Status
}

// nackBook holds the NACK statuses of each resource, by reporter, and the latest NACKs.
type nackBook struct {
	byKey  map[source.Key]map[string]nackStatus
	recent []xds.Nack
}

// RecordNack records a client's NACK as a Rejected status, reported by
// "<role>/<node id>" with the error detail, on the resources it concerns, until the
// version serving of each of them changes. It is logged and kept in Stages.
func (p *Pipeline) RecordNack(n xds.Nack) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nacks.recent = append(p.nacks.recent, n)
	if len(p.nacks.recent) > maxNacks {
		p.nacks.recent = append([]xds.Nack(nil), p.nacks.recent[len(p.nacks.recent)-maxNacks:]...)
	}
	var keys []string
	if n.Role == xds.RoleExtauth && n.TypeURL == xds.ExtAuthConfigType {
		p.gate.nack(nackedIDs(n))
	}
	if edge := p.rawEdge; edge != nil {
		reporter := n.Role + "/" + n.NodeID
		if n.Identity != "" {
			reporter += " (" + n.Identity + ")"
		}
		for _, c := range concerns(n, edge) {
			if p.nacks.byKey == nil {
				p.nacks.byKey = map[source.Key]map[string]nackStatus{}
			}
			if p.nacks.byKey[c.key] == nil {
				p.nacks.byKey[c.key] = map[string]nackStatus{}
			}
			p.nacks.byKey[c.key][reporter] = nackStatus{hash: c.hash, status: validate.Status{
				State: validate.Rejected, Reasons: c.reasons, ReportedBy: reporter}}
			keys = append(keys, c.key.String())
		}
		p.stages.Edge = p.clientStatuses(edge)
	}
	p.stages.Nacks = p.nacks.list()
	p.o.Log.Error().Str("role", n.Role).Str("node", n.NodeID).Str("type", n.TypeURL).Strs("resources", keys).
		Str("detail", n.Detail).Msg("xds: a client rejected a response")
}

type concern struct {
	key     source.Key
	hash    string
	reasons []string
}

// concerns maps a NACK onto the resources it is about. extauth's detail has one line
// per config, "<config_id>: <reason>"; a proxy's names are clusters (Upstreams), virtual
// hosts (VHDS: their VirtualServices) or a route configuration (the VirtualServices its
// detail names, else all of them).
func concerns(n xds.Nack, edge *validate.Edge) []concern {
	index := map[string]*validate.Resource{}
	for r := range edge.Resources.Values() {
		if r.Serving != "" {
			index[r.Kind+" "+r.ID()] = r
		}
	}
	byID := func(kind, id string) *validate.Resource { return index[kind+" "+id] }
	var out []concern
	add := func(r *validate.Resource, reasons []string) {
		if r != nil {
			out = append(out, concern{key: r.Key(), hash: r.Serving, reasons: reasons})
		}
	}
	switch n.TypeURL {
	case xds.ExtAuthConfigType:
		lines := map[string][]string{}
		for _, l := range strings.Split(n.Detail, "\n") {
			if id, _, ok := strings.Cut(l, ": "); ok {
				lines[id] = append(lines[id], l)
			}
		}
		names := n.Names
		if len(lines) > 0 {
			names = sortedIDs(lines)
		}
		for _, id := range names {
			why := lines[id]
			if why == nil {
				why = []string{n.Detail}
			}
			add(byID(apiv1.KindAuthConfig, id), why)
		}
	case xds.ClusterType, xds.EndpointType:
		for _, name := range n.Names {
			add(byID(apiv1.KindUpstream, name), []string{n.Detail})
		}
	case xds.VirtualHostType:
		// Each virtual host is a VirtualService's: those the detail names, else every
		// one the rejected response carried.
		var named, all []concern
		for _, name := range n.Names {
			_, id, _ := xds.SplitVirtualHostName(name)
			r := byID(apiv1.KindVirtualService, id)
			if r == nil {
				continue
			}
			c := concern{key: r.Key(), hash: r.Serving, reasons: []string{n.Detail}}
			all = append(all, c)
			if strings.Contains(n.Detail, id) {
				named = append(named, c)
			}
		}
		if named != nil {
			all = named
		}
		out = append(out, all...)
	case xds.RouteType, xds.ListenerType:
		var named, all []concern
		for r := range edge.Resources.Values() {
			if r.Kind != apiv1.KindVirtualService || r.Serving == "" {
				continue
			}
			c := concern{key: r.Key(), hash: r.Serving, reasons: []string{n.Detail}}
			all = append(all, c)
			if strings.Contains(n.Detail, r.ID()) {
				named = append(named, c)
			}
		}
		if named != nil {
			all = named
		}
		out = append(out, all...)
	}
	return out
}

// nackedIDs are the config ids an extauth NACK is about: those its detail names
// ("<config_id>: <reason>" lines), else every config of the rejected response.
func nackedIDs(n xds.Nack) []string {
	var ids []string
	for _, l := range strings.Split(n.Detail, "\n") {
		if id, _, ok := strings.Cut(l, ": "); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return n.Names
	}
	return ids
}

func sortedIDs(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// forget drops the statuses of versions that no longer serve: only the resources
// that changed in this run can have.
func (b *nackBook) forget(edge *validate.Edge) {
	if len(b.byKey) == 0 {
		return
	}
	for _, k := range edge.Removed {
		delete(b.byKey, k)
	}
	for _, r := range edge.Changed {
		byReporter := b.byKey[r.Key()]
		for reporter, ns := range byReporter {
			if ns.hash != r.Serving {
				delete(byReporter, reporter)
			}
		}
		if byReporter != nil && len(byReporter) == 0 {
			delete(b.byKey, r.Key())
		}
	}
}

// apply returns edge with the client statuses added after validation's. edge itself is
// returned when there are none; otherwise the resources concerned are replaced by
// copies in a copy of the list (which shares every chunk without one): an Edge is
// never modified.
func (b *nackBook) apply(edge *validate.Edge) *validate.Edge {
	if len(b.byKey) == 0 {
		return edge
	}
	out := *edge
	resources := edge.Resources.Edit()
	for k, byReporter := range b.byKey {
		i, ok := edge.Index(k)
		if !ok || len(byReporter) == 0 {
			continue
		}
		r := edge.Resources.At(i)
		c := *r
		c.Statuses = append([]validate.Status(nil), r.Statuses...)
		for _, reporter := range sortedKeys(byReporter) {
			if ns := byReporter[reporter]; ns.hash == r.Serving {
				c.Statuses = append(c.Statuses, ns.status)
			}
		}
		resources.Set(i, &c)
	}
	out.Resources = resources.List()
	return &out
}

func sortedKeys(m map[string]nackStatus) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (b *nackBook) list() []xds.Nack { return append([]xds.Nack(nil), b.recent...) }
