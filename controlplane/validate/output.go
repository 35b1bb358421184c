package validate

import (
	"slices"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// output assembles the Edge: the last one patched where entries were invalidated,
// or, when entries came or went (or a serving TLS certificate is concerned), a pass
// over every entry in input order.
func (v *Validator) output(in *source.Input) *Edge {
	out := v.patch(in)
	if out == nil {
		out = v.outputAll(in)
	} else {
		v.patched++
	}
	for _, e := range v.dirty {
		e.dirty = false
	}
	v.dirty, v.moved = v.dirty[:0], false
	out.Accepted.Extauthz = v.clusters[v.settings.ExtauthzServer]
	v.edge = out
	return out
}

// outputAll is output's pass over every entry, which places them for patch.
func (v *Validator) outputAll(in *source.Input) *Edge {
	out := &Edge{Problems: in.Problems}
	out.Accepted.Settings = v.settings
	var resources chunked.Builder[*Resource]
	var clusters chunked.Builder[*translate.Cluster]
	var vhosts chunked.Builder[*translate.VirtualHost]
	var exts chunked.Builder[*extauthv1.ExtAuthConfig]
	for i, e := range v.aligned {
		if e.out == nil {
			e.out = e.resource()
			out.Changed = append(out.Changed, e.out)
		}
		resources.Append(e.out)
		e.pos, e.kind = int32(i), e.outKind()
		switch e.kind {
		case outCluster:
			e.slot = int32(clusters.Len())
			clusters.Append(e.cluster)
		case outVirtualHost:
			e.slot = int32(vhosts.Len())
			vhosts.Append(e.vh)
		case outExtAuthConfig:
			e.slot = int32(exts.Len())
			exts.Append(e.ext)
		case outTLSCert:
			if out.Accepted.TLSCerts == nil {
				out.Accepted.TLSCerts = map[string]*translate.TLSCert{}
			}
			out.Accepted.TLSCerts[e.tls.Name] = e.tls
		}
	}
	out.Resources, out.ExtAuthConfigs = resources.List(), exts.List()
	out.Accepted.Clusters, out.Accepted.VirtualHosts = clusters.List(), vhosts.List()
	return out
}

// patch is the last edge with the invalidated entries made again, sharing every list
// they do not change, and every chunk of the lists they change but the chunks they
// are in (the edge is never modified once returned: see chunked.List); nil when
// entries came or went, or one joins or leaves a list, or concerns a TLS certificate:
// then places shift, and outputAll places them again. An edit of one resource costs
// what it touches, not a pass over, or a copy of, every list.
func (v *Validator) patch(in *source.Input) *Edge {
	last := v.edge
	if last == nil || v.moved || v.Full {
		return nil
	}
	for _, e := range v.dirty {
		if k := e.outKind(); e.removed || k != e.kind || k == outTLSCert {
			return nil
		}
	}
	slices.SortFunc(v.dirty, func(a, b *entry) int { return int(a.pos - b.pos) })
	out := &Edge{Problems: in.Problems, Accepted: last.Accepted}
	out.Accepted.Settings = v.settings
	resources, exts := last.Resources.Edit(), last.ExtAuthConfigs.Edit()
	clusters, vhosts := last.Accepted.Clusters.Edit(), last.Accepted.VirtualHosts.Edit()
	for _, e := range v.dirty {
		e.out = e.resource()
		out.Changed = append(out.Changed, e.out)
		resources.Set(int(e.pos), e.out)
		switch e.kind {
		case outCluster:
			clusters.Set(int(e.slot), e.cluster)
		case outVirtualHost:
			vhosts.Set(int(e.slot), e.vh)
		case outExtAuthConfig:
			exts.Set(int(e.slot), e.ext)
		}
	}
	out.Resources, out.ExtAuthConfigs = resources.List(), exts.List()
	out.Accepted.Clusters, out.Accepted.VirtualHosts = clusters.List(), vhosts.List()
	return out
}

// outKind is which list of the edge an entry serves in.
type outKind uint8

const (
	outNone outKind = iota
	outCluster
	outVirtualHost
	outExtAuthConfig
	outTLSCert
)

func (e *entry) outKind() outKind {
	switch {
	case e.cluster != nil:
		return outCluster
	case e.vh != nil:
		return outVirtualHost
	case e.ext != nil:
		return outExtAuthConfig
	case e.tls != nil && e.serving != nil:
		return outTLSCert
	}
	return outNone
}
