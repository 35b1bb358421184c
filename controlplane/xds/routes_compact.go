package xds

import (
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A virtual host, or a resource, may be handed compact, as the translation keeps them:
// its field 1 (the name of a virtual host, a cluster, a ClusterLoadAssignment) and the
// rest of its serialization as unknown fields (what protobuf serializes is then the
// same bytes as the full message's). Publish decodes one to check it, once, when it
// is new; whoever else reads the fields of a published resource expands it first.

// isCompact says whether m has nothing but its field 1 and unknown fields.
func isCompact(m protoreflect.Message) bool {
	if len(m.GetUnknown()) == 0 {
		return false
	}
	only := true
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		only = fd.Number() == 1
		return only
	})
	return only
}

// expandMessage is m as a full message: m itself unless it is compact.
func expandMessage[M proto.Message](m M) (M, error) {
	r := m.ProtoReflect()
	if !r.IsValid() || !isCompact(r) {
		return m, nil
	}
	out := r.New()
	if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(r.GetUnknown(), out.Interface()); err != nil {
		return m, fmt.Errorf("decoding: %w", err)
	}
	if fd := r.Descriptor().Fields().ByNumber(1); fd != nil && r.Has(fd) {
		out.Set(fd, r.Get(fd))
	}
	return out.Interface().(M), nil
}

// expandVirtualHost is vh as a full message: vh itself unless it is compact.
func expandVirtualHost(vh *route.VirtualHost) (*route.VirtualHost, error) {
	if vh == nil {
		return nil, nil
	}
	full, err := expandMessage(vh)
	if err != nil {
		return nil, fmt.Errorf("virtual host %q: %w", vh.GetName(), err)
	}
	return full, nil
}

// Expand is res with the fields of its own and its virtual hosts readable: a compact
// resource decoded, and a route configuration with compact virtual hosts copied with
// them decoded; res itself when nothing is compact. res is not modified.
func Expand(res types.Resource) (types.Resource, error) {
	if res == nil {
		return nil, nil
	}
	full, err := expandMessage(res)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", res.ProtoReflect().Descriptor().Name(), resourceName(res), err)
	}
	if full != res {
		return full, nil
	}
	rc, ok := res.(*route.RouteConfiguration)
	if !ok {
		return res, nil
	}
	var out *route.RouteConfiguration
	for i, vh := range rc.GetVirtualHosts() {
		full, err := expandVirtualHost(vh)
		if err != nil {
			return nil, fmt.Errorf("route configuration %q: %w", rc.GetName(), err)
		}
		if full == vh {
			continue
		}
		if out == nil {
			out = withoutVirtualHosts(rc)
			out.ProtoReflect().SetUnknown(rc.ProtoReflect().GetUnknown())
			out.VirtualHosts = append([]*route.VirtualHost(nil), rc.GetVirtualHosts()...)
		}
		out.VirtualHosts[i] = full
	}
	if out == nil {
		return res, nil
	}
	return out, nil
}
