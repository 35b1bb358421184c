package translate

import (
	"strconv"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// ExtAuthConfigType is the type URL of ExtAuthConfig resources (xds.ExtAuthConfigType).
const ExtAuthConfigType = "type.googleapis.com/gatehouse.extauth.v1.ExtAuthConfig"

// Resources is what one role is served: type URL → resource name → message.
type Resources = map[string]map[string]types.Resource

// Envoy translates a Proxy into the Envoy resources of its role: listeners, route
// configurations, clusters and the ClusterLoadAssignments of EDS clusters.
//
// What stays proportional to the number of resources on every call, and why: the maps
// returned (Publish takes a role's full desired state), one pass over the virtual
// hosts and clusters to look their messages up, and the route configuration, which is
// one message holding every virtual host: when one virtual host changes it is rebuilt
// as a new slice of the cached virtual host pointers (no virtual host is rebuilt), but
// the xDS server must still hash and send it whole. Serving virtual hosts over VHDS
// would remove that, at the price of delta-only xDS and on-demand host discovery.
func (c *Cache) Envoy(p *Proxy) Resources {
	out := Resources{
		resourcev3.ListenerType: make(map[string]types.Resource, len(p.Listeners)),
		resourcev3.RouteType:    make(map[string]types.Resource, len(p.Listeners)),
		resourcev3.ClusterType:  make(map[string]types.Resource, len(p.Clusters)),
		resourcev3.EndpointType: make(map[string]types.Resource, len(p.Clusters)),
	}
	for _, l := range p.Listeners {
		key := l.Name + "|" + l.Address + "|" + strconv.Itoa(int(l.Port)) + "|" + l.RouteConfig
		if p.Extauthz != nil {
			key += "|" + p.Extauthz.Cluster + "|" + p.Extauthz.Timeout.String()
		}
		lis, _ := c.listeners.get(c.gen, key, func() (*listenerv3.Listener, error) { return EnvoyListener(l, p.Extauthz), nil })
		out[resourcev3.ListenerType][l.Name] = lis
		out[resourcev3.RouteType][l.RouteConfig] = c.routeConfiguration(p.Role, l)
	}
	for _, cl := range p.Clusters {
		http2 := p.Extauthz != nil && cl.Name == p.Extauthz.Cluster
		key := cl.Hash
		if http2 {
			key += "|h2"
		}
		ec, _ := c.envoyCl.get(c.gen, key, func() (envoyCluster, error) {
			cluster, cla := EnvoyCluster(cl, http2)
			return envoyCluster{cluster, cla}, nil
		})
		out[resourcev3.ClusterType][cl.Name] = ec.cluster
		if ec.cla != nil {
			out[resourcev3.EndpointType][cl.Name] = ec.cla
		}
	}
	return out
}

func (c *Cache) routeConfiguration(role string, l *Listener) *routev3.RouteConfiguration {
	vhs := make([]*routev3.VirtualHost, len(l.VirtualHosts))
	for i, vh := range l.VirtualHosts {
		vhs[i], _ = c.envoyVH.get(c.gen, vh.Hash, func() (*routev3.VirtualHost, error) { return EnvoyVirtualHost(vh), nil })
	}
	key := role + "/" + l.RouteConfig
	rc := c.routes[key]
	if rc == nil || !samePointers(rc.msg.VirtualHosts, vhs) {
		rc = &routeConfig{msg: EnvoyRouteConfiguration(l.RouteConfig, vhs)}
		c.routes[key] = rc
	}
	rc.gen = c.gen
	return rc.msg
}

func samePointers(a, b []*routev3.VirtualHost) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ExtAuthConfigs translates AuthConfigs into the resources of the extauth role, named
// by config_id. An AuthConfig that does not translate is left out and returned in the
// errors by its id (validation has normally rejected it before).
func (c *Cache) ExtAuthConfigs(acs []source.Resource, secrets func(id string) *source.Resource, timeout time.Duration) (map[string]types.Resource, map[string]error) {
	out := make(map[string]types.Resource, len(acs))
	var errs map[string]error
	for i := range acs {
		cfg, err := c.AuthConfig(&acs[i], secrets, timeout)
		if err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			errs[acs[i].ID()] = err
			continue
		}
		out[cfg.GetConfigId()] = cfg
	}
	return out, errs
}
