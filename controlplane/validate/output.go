package validate

import (
	"slices"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
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
	out := &Edge{Resources: make([]*Resource, len(v.aligned)), Problems: in.Problems}
	out.Accepted.Settings = v.settings
	if last := v.edge; last != nil {
		out.Accepted.Clusters = make([]*translate.Cluster, 0, len(last.Accepted.Clusters)+1)
		out.Accepted.VirtualHosts = make([]*translate.VirtualHost, 0, len(last.Accepted.VirtualHosts)+1)
		out.ExtAuthConfigs = make([]*extauthv1.ExtAuthConfig, 0, len(last.ExtAuthConfigs)+1)
	}
	for i, e := range v.aligned {
		if e.out == nil {
			e.out = e.resource()
			out.Changed = append(out.Changed, e.out)
		}
		out.Resources[i] = e.out
		e.pos, e.kind = int32(i), e.outKind()
		switch e.kind {
		case outCluster:
			e.slot = int32(len(out.Accepted.Clusters))
			out.Accepted.Clusters = append(out.Accepted.Clusters, e.cluster)
		case outVirtualHost:
			e.slot = int32(len(out.Accepted.VirtualHosts))
			out.Accepted.VirtualHosts = append(out.Accepted.VirtualHosts, e.vh)
		case outExtAuthConfig:
			e.slot = int32(len(out.ExtAuthConfigs))
			out.ExtAuthConfigs = append(out.ExtAuthConfigs, e.ext)
		case outTLSCert:
			if out.Accepted.TLSCerts == nil {
				out.Accepted.TLSCerts = map[string]*translate.TLSCert{}
			}
			out.Accepted.TLSCerts[e.tls.Name] = e.tls
		}
	}
	return out
}

// patch is the last edge with the invalidated entries made again, sharing every list
// they do not change (the edge is never modified once returned); nil when entries
// came or went, or one joins or leaves a list, or concerns a TLS certificate: then
// places shift, and outputAll places them again. An edit of one resource costs what
// it touches, not a pass over ten thousands of entries.
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
	out := &Edge{Resources: last.Resources, Problems: in.Problems, Accepted: last.Accepted, ExtAuthConfigs: last.ExtAuthConfigs}
	out.Accepted.Settings = v.settings
	if len(v.dirty) > 0 {
		out.Resources = slices.Clone(last.Resources)
	}
	var clusters, vhosts, exts bool // the lists copied
	for _, e := range v.dirty {
		e.out = e.resource()
		out.Changed = append(out.Changed, e.out)
		out.Resources[e.pos] = e.out
		switch {
		case e.kind == outCluster && out.Accepted.Clusters[e.slot] != e.cluster:
			if !clusters {
				out.Accepted.Clusters, clusters = slices.Clone(out.Accepted.Clusters), true
			}
			out.Accepted.Clusters[e.slot] = e.cluster
		case e.kind == outVirtualHost && out.Accepted.VirtualHosts[e.slot] != e.vh:
			if !vhosts {
				out.Accepted.VirtualHosts, vhosts = slices.Clone(out.Accepted.VirtualHosts), true
			}
			out.Accepted.VirtualHosts[e.slot] = e.vh
		case e.kind == outExtAuthConfig && out.ExtAuthConfigs[e.slot] != e.ext:
			if !exts {
				out.ExtAuthConfigs, exts = slices.Clone(out.ExtAuthConfigs), true
			}
			out.ExtAuthConfigs[e.slot] = e.ext
		}
	}
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
