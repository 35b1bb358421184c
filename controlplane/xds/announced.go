package xds

import (
	"slices"
	"unicode/utf8"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/encoding/protowire"

	"gatehouse.dev/gatehouse/internal/wirefields"
)

// announced is what a delta client announced it holds on a new stream (its request's
// initial_resource_versions), as it came on the wire: each entry of the map, checked
// when the request was decoded. The codec keeps the entries among the request's
// unknown fields rather than decoding them into a map, so a client that holds what is
// served costs a pass over its entries instead of a map of its own (takeAnnounced).
type announced []byte

// keepAnnounced adds the entries to req's unknown fields (entries itself when there
// were none).
func keepAnnounced(req *discovery.DeltaDiscoveryRequest, entries []byte) {
	m := req.ProtoReflect()
	if u := m.GetUnknown(); len(u) > 0 {
		entries = append(u, entries...)
	}
	m.SetUnknown(entries)
}

// takeAnnounced takes the entries the codec kept out of req; nil when it kept none.
func takeAnnounced(req *discovery.DeltaDiscoveryRequest) announced {
	m := req.ProtoReflect()
	u := m.GetUnknown()
	entries, others := 0, 0
	_ = wirefields.Each(u, func(f wirefields.Field) bool {
		if f.Num == initialVersionsField && f.Type == protowire.BytesType {
			entries++
		} else {
			others++
		}
		return true
	})
	switch {
	case entries == 0:
		return nil
	case others == 0: // the common case: the entries alone, as they are
		m.SetUnknown(nil)
		return announced(u)
	}
	kept, rest := splitAnnounced(u, nil, nil)
	m.SetUnknown(rest)
	return kept
}

// each calls f with every entry's name and version, in the order announced; the
// slices are valid only during the call.
func (a announced) each(f func(name, version []byte)) {
	for b := a; len(b) > 0; {
		_, _, n := protowire.ConsumeTag(b)
		entry, m := protowire.ConsumeBytes(b[n:])
		key, value, _ := mapEntryBytes(entry)
		f(key, value)
		b = b[n+m:]
	}
}

// versions is a in a map, as proto decodes it (a name announced twice has its last
// version).
func (a announced) versions() map[string]string {
	n := 0
	a.each(func([]byte, []byte) { n++ })
	m := make(map[string]string, n)
	a.each(func(name, version []byte) { m[string(name)] = string(version) })
	return m
}

// mapEntryBytes decodes a map<string, string> entry as proto does: key 1, value 2, each
// empty when absent, the last one when repeated, other fields skipped; every string
// must be valid UTF-8, as proto requires of them.
func mapEntryBytes(b []byte) (key, value []byte, err error) {
	return wirefields.StringEntry(b, func(s []byte) error {
		if !utf8.Valid(s) {
			return errInvalidUTF8
		}
		return nil
	})
}

// allAnnounced compares what a client announced on a new stream with what is served
// and subscribed to, entry by entry, without a map of what it holds. It answers (ok)
// only when the response then brings the client to the version table: for a wildcard
// subscription, or a named one that covers every name served; and only when no name
// was announced twice. Otherwise the caller compares a.versions() (all).
func (w *deltaSet) allAnnounced(a announced, sub cachev3.Subscription) (changed []missed, removed []string, covers, ok bool) {
	wildcard, subscribed := sub.IsWildcard(), sub.SubscribedResources()
	if wildcard {
		if served, ok := w.servedDigest(); ok && a.digest() == served {
			return nil, nil, false, true // it holds what is served (announced_digest.go)
		}
	}
	w.stamp++
	seen, odd := 0, false
	a.each(func(name, version []byte) {
		if odd {
			return
		}
		r, served := w.resources[string(name)]
		if !wildcard && !w.subscribedTo(subscribed, string(name)) {
			served = false
		}
		if !served {
			removed = append(removed, string(name))
			return
		}
		v := r.version()
		if *r.seen == w.stamp || v == "" {
			odd = true // announced twice, or not marshaled: all() tells
			return
		}
		*r.seen = w.stamp
		seen++
		if string(version) != v {
			changed = append(changed, missed{r.name, v})
		}
	})
	if odd {
		return nil, nil, false, false
	}
	if seen < len(w.resources) { // served names not announced, sent if subscribed to
		unseen := func(r wireResource) bool {
			if *r.seen == w.stamp {
				return false
			}
			changed = append(changed, missed{r.name, r.version()})
			seen++
			return r.version() == ""
		}
		if wildcard || w.typeURL == VirtualHostType {
			for _, r := range w.resources {
				if wildcard || w.subscribedTo(subscribed, r.name) {
					odd = unseen(r) || odd
				}
			}
		} else {
			for name := range subscribed {
				if r, ok := w.resources[name]; ok {
					odd = unseen(r) || odd
				}
			}
		}
		if odd || seen < len(w.resources) && !wildcard {
			return nil, nil, false, false
		}
	}
	slices.Sort(removed)
	return changed, slices.Compact(removed), !wildcard, true
}
