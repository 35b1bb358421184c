package xds

import (
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/encoding/protowire"
)

// The wire form of a route configuration grows with its virtual hosts.
// Assembling it from each virtual host's serialization meant a map lookup per virtual
// host and a copy of each on every edit, and keeping every virtual host's
// serialization a second time beside the served bytes; instead the records of the
// virtual hosts an edit did not touch are copied from the bytes served before, in a
// few long runs (an edit of one virtual host: three copies), and only the virtual
// hosts new to the route configuration are serialized.

// wireRecords locates the virtual host records (tag, length, serialization) in the
// bytes of a wire route configuration.
type wireRecords struct {
	start int   // of the first record
	ends  []int // of each record, from start
}

// span is where record i lies in the bytes.
func (w *wireRecords) span(i int) (from, to int) {
	if i > 0 {
		from = w.ends[i-1]
	}
	return w.start + from, w.start + w.ends[i]
}

// servedRecords is a served wire route configuration: its virtual hosts, in order,
// its bytes and where each virtual host's record is in them.
type servedRecords struct {
	vhs   []*route.VirtualHost
	raw   []byte
	at    *wireRecords
	index map[*route.VirtualHost]int // vhs' places, made by find when first needed
}

// find is the place of vh in p (p may be nil).
func (p *servedRecords) find(vh *route.VirtualHost) (int, bool) {
	if p == nil {
		return 0, false
	}
	if p.index == nil {
		p.index = make(map[*route.VirtualHost]int, len(p.vhs))
		for k, v := range p.vhs {
			if _, dup := p.index[v]; !dup {
				p.index[v] = k
			}
		}
	}
	k, ok := p.index[vh]
	return k, ok
}

// wirePart is a run of records copied from the served bytes, or one new record.
type wirePart struct {
	from, to int    // in the served bytes, for a copied run
	vh       []byte // a new record's serialization
}

// wireRoutes is rc as handed to the cache: its whole serialization (shallow, which is
// rc without its virtual hosts, then its virtual hosts' records in order, then rc's
// unknown fields) as the unknown fields of an otherwise empty message, which protobuf
// emits verbatim: what MarshalResource gives for rc, taken as it is by serialized.
// The record of a virtual host prev has is copied from prev's bytes (found by place
// when it is where it was, or one place off; by a map of prev's virtual hosts, made
// only then, when it moved); wireOf gives the serialization of a virtual host new to
// the route configuration, nil for one prev has. prev is nil when nothing is served.
func wireRoutes(rc, shallow *route.RouteConfiguration, wireOf func(*route.VirtualHost) []byte, prev *servedRecords) (*route.RouteConfiguration, *wireRecords, error) {
	head, err := cachev3.MarshalResource(shallow)
	if err != nil {
		return nil, nil, fmt.Errorf("marshaling: %w", err)
	}
	vhs := rc.GetVirtualHosts()
	records := &wireRecords{start: len(head), ends: make([]int, len(vhs))}
	var parts []wirePart
	n := 0 // bytes of the records so far
	for i, j := 0, 0; i < len(vhs); i++ {
		if prev != nil && j+1 < len(prev.vhs) && vhs[i] != prev.vhs[j] && vhs[i] == prev.vhs[j+1] {
			j++ // prev.vhs[j] is gone
		}
		if prev != nil && j < len(prev.vhs) && vhs[i] == prev.vhs[j] {
			from, to := prev.at.span(j)
			if k := len(parts) - 1; k >= 0 && parts[k].vh == nil && parts[k].to == from {
				parts[k].to = to
			} else {
				parts = append(parts, wirePart{from: from, to: to})
			}
			n += to - from
			records.ends[i] = n
			j++
			continue
		}
		if b := wireOf(vhs[i]); b != nil {
			parts = append(parts, wirePart{vh: b})
			n += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(b))
		} else if k, ok := prev.find(vhs[i]); ok {
			from, to := prev.at.span(k)
			parts = append(parts, wirePart{from: from, to: to})
			n += to - from
		} else {
			return nil, nil, fmt.Errorf("virtual_hosts[%d]: neither served nor serialized (a bug)", i)
		}
		records.ends[i] = n
		if prev != nil && j < len(prev.vhs) && (i+1 >= len(vhs) || vhs[i+1] != prev.vhs[j]) {
			j++ // vhs[i] replaces prev.vhs[j] (rather than coming before it)
		}
	}
	tail := rc.ProtoReflect().GetUnknown()
	raw := append(make([]byte, 0, len(head)+n+len(tail)), head...)
	for _, p := range parts {
		if p.vh == nil {
			raw = append(raw, prev.raw[p.from:p.to]...)
			continue
		}
		raw = protowire.AppendTag(raw, virtualHostsField, protowire.BytesType)
		raw = protowire.AppendBytes(raw, p.vh)
	}
	raw = append(raw, tail...)
	out := &route.RouteConfiguration{}
	out.ProtoReflect().SetUnknown(raw)
	return out, records, nil
}
