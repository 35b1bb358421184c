package devgateway

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/internal/wirefields"
)

// vhostMemo holds the virtual hosts of the last route configurations, parsed without
// a problem, by their wire bytes: an update decodes and parses only the virtual hosts
// whose bytes changed. Specs are never modified once parsed, so they are shared.
type vhostMemo map[string]*vhostSpec

// virtualHostsField is RouteConfiguration.virtual_hosts's field number.
var virtualHostsField = (&routev3.RouteConfiguration{}).ProtoReflect().Descriptor().Fields().ByName("virtual_hosts").Number()

// parseRouteConfigMemo is parseRouteConfig of the RouteConfiguration a holds, with the
// virtual hosts whose bytes memo holds taken from it; next receives every virtual host
// of the result. Whenever anything is wrong (a decoding error, a problem, a name that
// is not n) it parses the whole resource as parseRouteConfig does, so what it reports
// is word for word the same; ok is false then and the caller reports problems.
func parseRouteConfigMemo(a *anypb.Any, n string, memo, next vhostMemo) (s *routeSpec, ok bool) {
	if a.GetTypeUrl() != resourcev3.RouteType {
		return nil, false
	}
	var rest []byte
	var hosts [][]byte
	err := wirefields.Each(a.GetValue(), func(f wirefields.Field) bool {
		if f.Num == virtualHostsField && f.Type == protowire.BytesType {
			hosts = append(hosts, f.Value)
		} else {
			rest = append(rest, f.Raw...)
		}
		return true
	})
	if err != nil {
		return nil, false
	}
	rc := &routev3.RouteConfiguration{}
	if err := proto.Unmarshal(rest, rc); err != nil || validate(rc) != nil || rc.GetName() != n {
		return nil, false
	}
	var pr problems
	s = parseRouteConfig(rc, "", &pr) // no virtual hosts: the configuration's own fields
	s.level = string(rest)
	domains := make(map[string]string, len(hosts))
	for _, raw := range hosts {
		v, hit := memo[string(raw)]
		if hit {
			for _, d := range v.domains {
				if _, dup := domains[d]; dup {
					return nil, false
				}
				domains[d] = v.name
			}
		} else {
			vh := &routev3.VirtualHost{}
			if err := proto.Unmarshal(raw, vh); err != nil || validate(vh) != nil {
				return nil, false
			}
			if v = parseVhost(vh, "", domains, &pr); len(pr) > 0 {
				return nil, false
			}
			v.wire = string(raw)
		}
		next[v.wire] = v
		s.hosts = append(s.hosts, v)
	}
	if len(pr) > 0 {
		return nil, false
	}
	s.clusters = routeClusters(s.hosts)
	return s, true
}
