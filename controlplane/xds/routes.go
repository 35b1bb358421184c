package xds

import (
	"fmt"
	"strconv"
	"sync"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A route configuration holds every virtual host of a listener, so with thousands of
// them one edited route would cost a validation, a walk, a serialization and a hash of
// all of them. The translation shares the
// *VirtualHost of an unchanged VirtualService between route configurations, so a
// virtual host already checked (same pointer) is not checked again, and whether a
// route configuration changed is decided by its virtual host pointers and the rest of
// it.
//
// What the cache is given is the wire form of the route configuration: the same
// message without its virtual hosts, which are carried instead as their deterministic
// serializations, kept per pointer, in the message's unknown fields under the
// virtual_hosts field number. Protobuf emits unknown fields verbatim, so go-control-plane
// serializes it with one copy instead of walking every virtual host, and a client
// decodes it into exactly the route configuration (a repeated field may come after the
// other fields on the wire). The version is ContentVersion of that serialization:
// equal content, equal version, so a route configuration whose content did not change
// is not sent again.

// vhostMemo is what is known of each virtual host of a served route configuration.
type vhostMemo map[*route.VirtualHost]vhostInfo

type vhostInfo struct {
	refs []key
	// wire is the deterministic serialization of a virtual host new to the route
	// configuration, until it is in the served bytes (it is not kept: wireRoutes
	// copies it from there).
	wire []byte
}

// virtualHostsField is the field number of RouteConfiguration.virtual_hosts.
var virtualHostsField = (&route.RouteConfiguration{}).ProtoReflect().Descriptor().Fields().ByName("virtual_hosts").Number()

// diffRoutes is diff for one route configuration: unchanged, or inspected afresh with
// the help of the virtual hosts already checked.
func (rl *role) diffRoutes(c *change, name string, res types.Resource, old served, known bool) error {
	rc, ok := res.(*route.RouteConfiguration)
	if !ok || rc == nil {
		_, err := inspect(RouteType, name, res) // says what is wrong with it
		return err
	}
	if rc.GetName() != name {
		return fmt.Errorf("is named %q inside, listed as %q", rc.GetName(), name)
	}
	shallow := withoutVirtualHosts(rc)
	if known && sameRoutes(old.res.(*route.RouteConfiguration), rc, shallow) {
		c.repoint[key{RouteType, name}] = res
		return nil
	}
	if err := validate(shallow); err != nil {
		return err
	}
	w := &walker{}
	w.message("", shallow.ProtoReflect())
	memo := rl.vhosts[name]
	var oldVHs []*route.VirtualHost
	if known {
		oldVHs = old.res.(*route.RouteConfiguration).GetVirtualHosts()
	}
	vhs := rc.GetVirtualHosts()
	maybeNew, maybeGone := changedPositions(memo, oldVHs, vhs)
	edit := partEdit{add: vhostMemo{nil: {refs: w.refs}}, drop: []*route.VirtualHost{nil}} // nil: the rest of it
	present := make(map[*route.VirtualHost]bool, len(maybeNew))
	for _, i := range maybeNew {
		vh := vhs[i]
		path := "virtual_hosts[" + strconv.Itoa(i) + "]"
		if vh == nil {
			w.errs = append(w.errs, fmt.Errorf("%s: is nil", path))
			continue
		}
		present[vh] = true
		if _, ok := memo[vh]; ok {
			continue
		}
		if _, ok := edit.add[vh]; ok { // the same pointer twice in one configuration
			continue
		}
		full, err := expandVirtualHost(vh) // routes_compact.go
		if err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		if err := validate(full); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		vw := &walker{}
		vw.message(path, full.ProtoReflect())
		w.errs = append(w.errs, vw.errs...)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(vh) // compact or not, the same bytes
		if err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: marshaling: %w", path, err))
			continue
		}
		edit.add[vh] = vhostInfo{refs: vw.refs, wire: b}
	}
	if len(w.errs) > 0 {
		return joinErrs(w.errs)
	}
	for _, vh := range maybeGone {
		if !present[vh] {
			edit.drop = append(edit.drop, vh)
		}
	}
	var prev *servedRecords
	if known && old.records != nil {
		prev = &servedRecords{vhs: oldVHs, raw: old.wire.ProtoReflect().GetUnknown(), at: old.records}
	}
	wire, records, err := wireRoutes(rc, shallow, func(vh *route.VirtualHost) []byte { return edit.add[vh].wire }, prev)
	if err != nil {
		return err
	}
	// Its references are kept in parts (route_refs.go), not in served.refs.
	c.upsert[key{RouteType, name}] = served{res: res, wire: wire, version: lazyVersion(wire), records: records}
	c.parts[name] = edit
	c.routes[name] = newRouteDelta(rl.routeRefs[name], memo, edit)
	return nil
}

// partEdit is how the parts of a served route configuration change: the virtual
// hosts new to it, and those it no longer has. The rest of it (the nil key) is
// always replaced.
type partEdit struct {
	add  vhostMemo
	drop []*route.VirtualHost
}

// apply makes e of the parts m of a route configuration as served.
func (e partEdit) apply(m vhostMemo) {
	for _, vh := range e.drop {
		delete(m, vh)
	}
	for vh, info := range e.add {
		m[vh] = vhostInfo{refs: info.refs}
	}
}

// changedPositions are the positions of next that may hold virtual hosts new to the
// served route configuration (whose parts are memo and virtual hosts old), and the
// old virtual hosts that may be gone. The translation rebuilds the list of virtual
// hosts but shares the unchanged ones, so comparing position by position finds an
// edit without hashing every pointer; when old holds a pointer twice (memo
// has fewer parts than positions) or nothing was served, every position is looked at.
func changedPositions(memo vhostMemo, old, next []*route.VirtualHost) (maybeNew []int, maybeGone []*route.VirtualHost) {
	if memo == nil || len(memo) != len(old)+1 {
		maybeNew = make([]int, len(next))
		for i := range next {
			maybeNew[i] = i
		}
		for vh := range memo {
			if vh != nil {
				maybeGone = append(maybeGone, vh)
			}
		}
		return maybeNew, maybeGone
	}
	for i := range max(len(old), len(next)) {
		switch {
		case i >= len(next):
			maybeGone = append(maybeGone, old[i])
		case i >= len(old):
			maybeNew = append(maybeNew, i)
		case old[i] != next[i]:
			maybeNew = append(maybeNew, i)
			maybeGone = append(maybeGone, old[i])
		}
	}
	return maybeNew, maybeGone
}

// serialized is what cachev3.MarshalResource gives for res; a message with nothing
// but unknown fields (a wire route configuration) is those bytes, taken without a copy.
func serialized(res types.Resource) ([]byte, error) {
	m := res.ProtoReflect()
	if raw := m.GetUnknown(); len(raw) > 0 {
		empty := true
		m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
			empty = false
			return false
		})
		if empty {
			return raw, nil
		}
	}
	return cachev3.MarshalResource(res)
}

// withoutVirtualHosts is rc without its virtual hosts, sharing everything else.
func withoutVirtualHosts(rc *route.RouteConfiguration) *route.RouteConfiguration {
	out := &route.RouteConfiguration{}
	dst := out.ProtoReflect()
	rc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != "virtual_hosts" {
			dst.Set(fd, v)
		}
		return true
	})
	return out
}

// sameRoutes reports whether next has the same virtual hosts (by pointer, in order)
// and the same everything else as old.
func sameRoutes(old, next, nextShallow *route.RouteConfiguration) bool {
	if len(old.GetVirtualHosts()) != len(next.GetVirtualHosts()) {
		return false
	}
	for i, vh := range next.GetVirtualHosts() {
		if old.GetVirtualHosts()[i] != vh {
			return false
		}
	}
	return proto.Equal(withoutVirtualHosts(old), nextShallow)
}

// lazyVersion hashes res the first time its version is asked for.
func lazyVersion(res types.Resource) func() string {
	return sync.OnceValue(func() string {
		b, err := serialized(res)
		if err != nil {
			return ""
		}
		return ContentVersion(b)
	})
}
