package translate

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// compactVirtualHost is vh as the cache keeps and hands it on: its name, and the rest
// of its deterministic serialization as unknown fields. At 10k virtual hosts the
// messages held ~18 MB and their serializations ~4 MB; the xDS server serves the bytes
// (protobuf emits unknown fields verbatim, after the name, which is field 1: the same
// bytes as the full message), and decodes them when it checks a virtual host new to it
// (xds.ExpandRoutes), as do the admin views. vh must be new and not shared: its name is
// cleared to serialize the rest.
func compactVirtualHost(vh *routev3.VirtualHost) *routev3.VirtualHost {
	name := vh.GetName()
	vh.Name = ""
	rest, err := proto.MarshalOptions{Deterministic: true}.Marshal(vh)
	if err != nil {
		panic("translate: " + err.Error()) // marshalling a well-formed message cannot fail
	}
	out := &routev3.VirtualHost{Name: name}
	out.ProtoReflect().SetUnknown(rest)
	return out
}
