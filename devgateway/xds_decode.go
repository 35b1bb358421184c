package devgateway

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Types are the xDS type URLs a Proxy is fed, in the order a change reaches it (clusters
// and endpoints before the listeners and routes that use them, route configurations
// before their VHDS virtual hosts).
var Types = []string{
	resourcev3.ClusterType,
	resourcev3.EndpointType,
	resourcev3.SecretType,
	resourcev3.ListenerType,
	resourcev3.RouteType,
	resourcev3.VirtualHostType,
}

// unpack decodes a as m, which must be of type typeURL, and runs the proto's own
// validation (Envoy's protoc-gen-validate rules), as Envoy does before anything else.
func unpack(a *anypb.Any, typeURL string, m proto.Message) error {
	if got := a.GetTypeUrl(); got != typeURL {
		return fmt.Errorf("is a %s, not a %s", got, typeURL)
	}
	if err := a.UnmarshalTo(m); err != nil {
		return err
	}
	return validate(m)
}

// unpackTyped decodes a typed_config: a must hold m's type.
func unpackTyped(a *anypb.Any, m proto.Message) error {
	return unpack(a, "type.googleapis.com/"+string(m.ProtoReflect().Descriptor().FullName()), m)
}

func validate(m proto.Message) error {
	if v, ok := m.(interface{ ValidateAll() error }); ok {
		return v.ValidateAll()
	}
	return nil
}

// configSource checks a config source is the ADS stream the gateway has.
func configSource(cs *corev3.ConfigSource, path string, pr *problems) {
	pr.only(cs, path, "ads", "self", "resource_api_version", "initial_fetch_timeout")
	if cs.GetAds() == nil && cs.GetSelf() == nil {
		pr.addf(path, "only ads and self config sources are supported (the gateway has one ADS stream)")
	}
	if v := cs.GetResourceApiVersion(); v != corev3.ApiVersion_V3 && v != corev3.ApiVersion_AUTO {
		pr.addf(join(path, "resource_api_version"), "%s is not supported (V3 only)", v)
	}
}
