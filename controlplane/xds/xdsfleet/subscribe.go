package xdsfleet

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/wirefields"
)

// subscriptions are what a client asks for, as its real client does: extauth every
// ExtAuthConfig (wildcard); a gateway proxy, as Envoy over ADS, every cluster and
// listener (wildcard), and by name the endpoints of its EDS clusters, the route
// configurations its listeners name and, over VHDS, the virtual hosts of the route
// configurations that have vhds (by naming the route configuration, their namespace). They outlive a stream: a new stream asks again
// for every name known.
type subscriptions struct {
	wildcard []string
	named    map[string]map[string]bool // type -> names
}

func newSubscriptions(role string) *subscriptions {
	if role == xds.RoleExtauth {
		return &subscriptions{wildcard: []string{xds.ExtAuthConfigType}}
	}
	return &subscriptions{wildcard: []string{xds.ClusterType, xds.ListenerType},
		named: map[string]map[string]bool{xds.EndpointType: {}, xds.RouteType: {}, xds.VirtualHostType: {}}}
}

// initial are the types a new stream subscribes to, in order.
func (s *subscriptions) initial() []string {
	out := slices.Clone(s.wildcard)
	for _, typ := range []string{xds.EndpointType, xds.RouteType, xds.VirtualHostType} {
		if len(s.named[typ]) > 0 {
			out = append(out, typ)
		}
	}
	return out
}

// request is the first request of typ on a new stream, announcing versions.
func (s *subscriptions) request(typ string, versions map[string]string) *discovery.DeltaDiscoveryRequest {
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: typ, InitialResourceVersions: versions}
	if slices.Contains(s.wildcard, typ) {
		req.ResourceNamesSubscribe = []string{"*"}
	} else {
		req.ResourceNamesSubscribe = slices.Sorted(maps.Keys(s.named[typ]))
	}
	return req
}

// follow updates the named subscriptions after a response of typ whose resources
// reference refs (EDS names of clusters, route configurations of listeners, VHDS
// namespaces of route configurations), and returns the requests that tell the server.
func (s *subscriptions) follow(typ string, resp *discovery.DeltaDiscoveryResponse, refs []string) []*discovery.DeltaDiscoveryRequest {
	dep := map[string]string{xds.ClusterType: xds.EndpointType, xds.ListenerType: xds.RouteType, xds.RouteType: xds.VirtualHostType}[typ]
	if dep == "" {
		return nil
	}
	have := s.named[dep]
	var add, drop []string
	for _, n := range refs {
		if !have[n] {
			have[n] = true
			add = append(add, n)
		}
	}
	if typ == xds.ClusterType || typ == xds.RouteType { // endpoints and VHDS namespaces are named after them here
		for _, n := range resp.GetRemovedResources() {
			if have[n] {
				delete(have, n)
				drop = append(drop, n)
			}
		}
	}
	if len(add) == 0 && len(drop) == 0 {
		return nil
	}
	return []*discovery.DeltaDiscoveryRequest{{TypeUrl: dep, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}}
}

// decode unmarshals one resource of typ, as its client must to use it, and returns
// the names it makes the client subscribe to.
func decode(typ string, b []byte) ([]string, error) {
	switch typ {
	case xds.ClusterType:
		var c cluster.Cluster
		if err := proto.Unmarshal(b, &c); err != nil {
			return nil, err
		}
		if c.GetType() != cluster.Cluster_EDS {
			return nil, nil
		}
		if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
			return []string{n}, nil
		}
		return []string{c.GetName()}, nil
	case xds.ListenerType:
		return listenerRoutes(b)
	case xds.RouteType:
		var rc route.RouteConfiguration
		if err := proto.Unmarshal(b, &rc); err != nil || rc.GetVhds() == nil {
			return nil, err
		}
		return []string{rc.GetName()}, nil
	case xds.VirtualHostType:
		return nil, proto.Unmarshal(b, &route.VirtualHost{})
	case xds.EndpointType:
		return nil, proto.Unmarshal(b, &endpoint.ClusterLoadAssignment{})
	case xds.SecretType:
		return nil, proto.Unmarshal(b, &tlsv3.Secret{})
	case xds.ExtAuthConfigType:
		return nil, proto.Unmarshal(b, &extauthv1.ExtAuthConfig{})
	}
	return nil, fmt.Errorf("unknown type %s", typ)
}

// listenerRoutes decodes a listener and its HTTP connection managers and returns the
// route configurations they take over RDS.
func listenerRoutes(b []byte) ([]string, error) {
	var l listener.Listener
	if err := proto.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	var out []string
	for _, fc := range l.GetFilterChains() {
		for _, f := range fc.GetFilters() {
			var m hcm.HttpConnectionManager
			if err := f.GetTypedConfig().UnmarshalTo(&m); err != nil {
				return nil, fmt.Errorf("filter %s: %w", f.GetName(), err)
			}
			if n := m.GetRds().GetRouteConfigName(); n != "" {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// QuickRetry is server/xdsclient.QuickRetry (a test there keeps them equal): how long
// an outage is retried every 250ms before the waits grow.
const QuickRetry = 5 * time.Second

// BackoffOf is the reconnect wait of one client of role as its real client waits:
// extauth's (server/xdsclient: 250ms for the first QuickRetry of an outage, then
// doubling to 15s, spread over [d/2, d)), or Envoy's for a proxy (its default jittered
// exponential backoff: from 500ms doubling to 30s, a wait drawn uniformly below the
// bound). Each client needs its own: extauth's keeps its last wait.
func BackoffOf(role string) Backoff {
	if role == xds.RoleExtauth {
		wait := 250 * time.Millisecond
		return func(n int, down time.Duration) time.Duration {
			if n == 0 || down < QuickRetry {
				wait = 250 * time.Millisecond
			} else {
				wait = min(2*wait, 15*time.Second)
			}
			return wait/2 + rand.N(wait/2+1)
		}
	}
	return func(n int, _ time.Duration) time.Duration {
		d := min(500*time.Millisecond<<min(n, 10), 30*time.Second)
		return rand.N(d) + time.Millisecond
	}
}

// routesWithoutVirtualHosts decodes a route configuration but for its virtual hosts
// (what a client that does not decode route configurations still reads: whether
// they come over VHDS) and returns the VHDS namespace it makes the client subscribe to.
func routesWithoutVirtualHosts(b []byte) ([]string, error) {
	var rest []byte
	err := wirefields.Each(b, func(f wirefields.Field) bool {
		if f.Num != virtualHostsField {
			rest = append(rest, f.Raw...)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return decode(xds.RouteType, rest)
}

var virtualHostsField = (&route.RouteConfiguration{}).ProtoReflect().Descriptor().Fields().ByName("virtual_hosts").Number()
