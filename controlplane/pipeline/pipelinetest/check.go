// Package pipelinetest helps test and measure the control plane: a checker that every
// generated resource is valid Envoy (or extauth) configuration and a role's resources
// are consistent, and a generator of large resource sets, as objects or YAML files.
package pipelinetest

import (
	"errors"
	"fmt"
	"sort"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// validator is every go-control-plane message: protoc-gen-validate's check.
type validator interface{ ValidateAll() error }

// Valid checks one role's resources (type URL → name → message): each resource under
// its own name passes ValidateAll, every Any inside it (typed_config, per-filter
// configs, protocol options) unpacks and passes ValidateAll too, and, for Envoy
// types, go-control-plane's snapshot consistency check passes (every EDS cluster has
// its ClusterLoadAssignment, every RDS name its route configuration, nothing extra);
// a VHDS virtual host is named "<route configuration>/<virtual host>", inside too,
// after a route configuration served with vhds.
func Valid(resources map[string]map[string]types.Resource) error {
	var errs []error
	byType := map[string][]types.Resource{}
	envoy := false
	for _, typeURL := range sortedTypes(resources) {
		for name, r := range resources[typeURL] {
			r, err := xds.Expand(r) // the translation's compact virtual hosts, decoded
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", typeURL, name, err))
				continue
			}
			if ex, ok := r.(interface{ GetConfigId() string }); ok {
				if ex.GetConfigId() != name {
					errs = append(errs, fmt.Errorf("%s %q: config_id is %q", typeURL, name, ex.GetConfigId()))
				}
			} else if typeURL == xds.VirtualHostType {
				errs = append(errs, vhdsNamed(resources, name, cachev3.GetResourceName(r))...)
			} else if got := cachev3.GetResourceName(r); got != name {
				errs = append(errs, fmt.Errorf("%s %q: resource is named %q", typeURL, name, got))
			}
			if err := validDeep(r); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", typeURL, name, err))
			}
			byType[typeURL] = append(byType[typeURL], r)
		}
		if cachev3.GetResponseType(typeURL) != types.UnknownType {
			envoy = true
		}
	}
	if envoy {
		snap, err := cachev3.NewSnapshot("check", byType)
		if err == nil {
			err = snap.Consistent()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("consistency: %w", err))
		}
	}
	return errors.Join(errs...)
}

// validDeep runs ValidateAll on m (when it has one) and on every Any inside it.
func validDeep(m proto.Message) error {
	var errs []error
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			errs = append(errs, err)
		}
	}
	walkAnys(m.ProtoReflect(), func(path string, a *anypb.Any) {
		inner, err := a.UnmarshalNew()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s does not unpack: %w", path, a.GetTypeUrl(), err))
			return
		}
		if err := validDeep(inner); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", path, a.GetTypeUrl(), err))
		}
	})
	return errors.Join(errs...)
}

// walkAnys calls f with every Any directly or indirectly in m (not inside other Anys:
// validDeep recurses into those after unpacking).
func walkAnys(m protoreflect.Message, f func(string, *anypb.Any)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		visit := func(path string, v protoreflect.Value) {
			if fd.Message() == nil {
				return
			}
			sub := v.Message()
			if a, ok := sub.Interface().(*anypb.Any); ok {
				f(path, a)
				return
			}
			walkAnys(sub, f)
		}
		name := string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visit(fmt.Sprintf("%s[%d]", name, i), l.Get(i))
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				sub := mv.Message()
				if a, ok := sub.Interface().(*anypb.Any); ok {
					f(name+"["+k.String()+"]", a)
				} else {
					walkAnys(sub, f)
				}
				return true
			})
		default:
			visit(name, v)
		}
		return true
	})
}

func sortedTypes(m map[string]map[string]types.Resource) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// vhdsNamed checks the name of a VHDS virtual host named inside as it is served
// under name.
func vhdsNamed(resources map[string]map[string]types.Resource, name, inside string) []error {
	rc, _, ok := xds.SplitVirtualHostName(name)
	if !ok || name != inside {
		return []error{fmt.Errorf("%s %q: not named <route configuration>/<virtual host> inside as well (%q)", xds.VirtualHostType, name, inside)}
	}
	r, ok := resources[xds.RouteType][rc]
	if !ok {
		return []error{fmt.Errorf("%s %q: route configuration %q is not served", xds.VirtualHostType, name, rc)}
	}
	full, err := xds.Expand(r)
	if err != nil {
		return []error{err}
	}
	if m, ok := full.(interface{ GetVhds() *routev3.Vhds }); !ok || m.GetVhds() == nil {
		return []error{fmt.Errorf("%s %q: route configuration %q has no vhds", xds.VirtualHostType, name, rc)}
	}
	return nil
}
