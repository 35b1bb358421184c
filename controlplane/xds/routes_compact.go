package xds

import (
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A virtual host may be handed compact, as the translation keeps them: its name, and
// the rest of its serialization as unknown fields (what protobuf serializes is then
// the same bytes as the full message's). Publish decodes one to check it, once, when
// it is new to the route configuration; whoever else reads the fields of a published
// route configuration expands it first.

// isCompact says whether vh has nothing but a name and unknown fields.
func isCompact(vh *route.VirtualHost) bool {
	m := vh.ProtoReflect()
	if len(m.GetUnknown()) == 0 {
		return false
	}
	only := true
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		only = fd.Number() == 1 // name
		return only
	})
	return only
}

// expandVirtualHost is vh as a full message: vh itself unless it is compact.
func expandVirtualHost(vh *route.VirtualHost) (*route.VirtualHost, error) {
	if vh == nil || !isCompact(vh) {
		return vh, nil
	}
	out := &route.VirtualHost{}
	if err := proto.Unmarshal(vh.ProtoReflect().GetUnknown(), out); err != nil {
		return nil, fmt.Errorf("virtual host %q: decoding: %w", vh.GetName(), err)
	}
	out.Name = vh.GetName()
	return out, nil
}

// ExpandRoutes is res with the fields of its virtual hosts readable: for a route
// configuration with compact virtual hosts, a copy holding them decoded (res is not
// modified); anything else as it is.
func ExpandRoutes(res types.Resource) (types.Resource, error) {
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
