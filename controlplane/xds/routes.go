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
// them one edited route would cost a validation, a walk and a hash of all of them.
// The translation shares the *VirtualHost of an unchanged VirtualService between
// route configurations, so a virtual host already checked (same pointer) is not
// checked again, and whether a route configuration changed is decided by its virtual
// host pointers and the rest of it. Its version (the content hash) is computed only
// when asked for; go-control-plane's cache hashes it anyway for delta clients, which
// are therefore not sent a route configuration whose content did not change.

// vhostMemo is the references of each virtual host of a served route configuration.
type vhostMemo map[*route.VirtualHost][]key

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
	next := make(vhostMemo, len(rc.GetVirtualHosts()))
	for i, vh := range rc.GetVirtualHosts() {
		path := "virtual_hosts[" + strconv.Itoa(i) + "]"
		if refs, ok := memo[vh]; ok {
			w.refs = append(w.refs, refs...)
			next[vh] = refs
			continue
		}
		if err := validate(vh); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		vw := &walker{}
		vw.message(path, vh.ProtoReflect())
		w.refs = append(w.refs, vw.refs...)
		w.errs = append(w.errs, vw.errs...)
		next[vh] = vw.refs
	}
	if len(w.errs) > 0 {
		return joinErrs(w.errs)
	}
	c.upsert[key{RouteType, name}] = served{res: res, refs: dedupe(w.refs), version: lazyVersion(res)}
	c.vhosts[name] = next
	return nil
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
		b, err := cachev3.MarshalResource(res)
		if err != nil {
			return ""
		}
		return cachev3.HashResource(b)
	})
}

// dedupe drops repeated references (thousands of routes name few clusters twice, but
// the index need not hold each twice).
func dedupe(refs []key) []key {
	seen := make(map[key]bool, len(refs))
	out := refs[:0]
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
