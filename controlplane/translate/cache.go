package translate

import (
	"maps"
	"strconv"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// Cache makes the Envoy stage incremental. Model values are shared between runs as
// long as their resource does not change, so the Cache compares the model slices of
// a run with the previous run's, pointer by pointer, and builds messages only for the
// model values that are new: every other message is handed on as the same pointer
// (which the xDS server skips without hashing it again), and the names of what it
// built again or dropped are reported (xds.Changed) so that the xDS server looks at those
// only. The builders it calls are pure; Cache only remembers. It is not safe for
// concurrent use.
//
// What stays proportional to the number of resources on every run, and why:
//   - one pointer comparison per virtual host, cluster and ExtAuthConfig;
//   - nothing for the maps of messages a role's state is handed in: they are edited
//     in place, the names edited reported (xds.Changed), as xds.Server.PublishChanged
//     allows, rather than copied per edit. A map returned is therefore valid until
//     the next call; whoever keeps it longer copies it (pipeline.Stages does);
//   - the route configuration: one message holding every virtual host. When one
//     virtual host changes it is rebuilt as a new slice of the cached virtual host
//     messages (no virtual host is rebuilt), but the xDS server must still copy the
//     others' bytes, hash and send it whole. Serving virtual hosts over VHDS would remove that, at the price
//     of delta-only xDS and on-demand host discovery in the proxy.
//
// Adding or removing a resource (rather than editing one) shifts the slices: that run
// matches the model values by pointer through a map, still without rebuilding any
// message whose model value is unchanged.
type Cache struct {
	roles  map[string]*roleCache
	ext    modelCache[*extauthv1.ExtAuthConfig, *extauthv1.ExtAuthConfig]
	extOut map[string]types.Resource // the map handed out, edited in place, as roleCache.cdsOut
}

type roleCache struct {
	listeners map[string]*listenerCache
	clusters  modelCache[*Cluster, envoyCluster]
	ext       Extauthz // the ext_authz server's cluster and TLS the clusters were built with (no Timeout)
	secrets   modelCache[*TLSCert, *tlsv3.Secret]
	tracing   string // Tracing.key of the CollectorCluster in cdsOut ("" when none)
	// The maps last handed out: handed out again while nothing changes, and copied
	// to make the next ones when something does (one map of each, not a working copy
	// beside the one handed out).
	cdsOut, edsOut, sdsOut map[string]types.Resource
}

// listenerCache remembers one listener and its route configurations.
type listenerCache struct {
	key      string
	listener *listenerv3.Listener
	vhosts   modelCache[*VirtualHost, *routev3.VirtualHost]
	options  listenerOptions                                      // of vhosts' models
	routes   *routev3.RouteConfiguration                          // a plain-text listener's
	perHost  map[*routev3.VirtualHost]*routev3.RouteConfiguration // a TLS listener's, one per virtual host
	// vhds are a plain-text listener's virtual hosts while it is on VHDS, by resource
	// name, edited in place as roleCache.cdsOut; vhdsOf is the route configuration
	// they were named for.
	vhds   map[string]types.Resource
	vhdsOf string
}

// vhdsUpdate brings lc.vhds up to the virtual hosts lc.vhosts last built for l, or
// empties it when l is nil (the listener is not on VHDS, or gone), noting every
// name it adds, replaces or drops.
func (lc *listenerCache) vhdsUpdate(l *Listener, note func(typ, name string)) {
	if l == nil || lc.vhds == nil || lc.vhdsOf != l.RouteConfig {
		for name := range lc.vhds {
			note(resourcev3.VirtualHostType, name)
		}
		lc.vhds = nil
		if l == nil {
			return
		}
		lc.vhds, lc.vhdsOf = make(map[string]types.Resource, len(l.VirtualHosts)), l.RouteConfig
		for _, vh := range l.VirtualHosts {
			name := xds.VirtualHostName(l.RouteConfig, vh.Name)
			lc.vhds[name] = renamed(lc.vhosts.built[vh], name)
			note(resourcev3.VirtualHostType, name)
		}
		return
	}
	for _, vh := range lc.vhosts.removed {
		name := xds.VirtualHostName(l.RouteConfig, vh.Name)
		delete(lc.vhds, name)
		note(resourcev3.VirtualHostType, name)
	}
	for _, vh := range lc.vhosts.added {
		name := xds.VirtualHostName(l.RouteConfig, vh.Name)
		lc.vhds[name] = renamed(lc.vhosts.built[vh], name)
		note(resourcev3.VirtualHostType, name)
	}
}

// renamed is the compact virtual host vh named name, sharing the rest of its bytes:
// Envoy keeps the virtual hosts of VHDS by their name and removes them by resource
// name, so the two must be the same.
func renamed(vh *routev3.VirtualHost, name string) *routev3.VirtualHost {
	out := &routev3.VirtualHost{Name: name}
	out.ProtoReflect().SetUnknown(vh.ProtoReflect().GetUnknown())
	return out
}

// virtualHosts is the VirtualHostType map of a role whose listeners of were on VHDS:
// the one listener's own (edited in place), or the union of several.
func virtualHosts(of []map[string]types.Resource) map[string]types.Resource {
	if len(of) == 1 {
		return of[0]
	}
	out := map[string]types.Resource{}
	for _, m := range of {
		maps.Copy(out, m)
	}
	return out
}

type envoyCluster struct {
	cluster *clusterv3.Cluster
	cla     *endpointv3.ClusterLoadAssignment
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	c := &Cache{roles: map[string]*roleCache{}}
	c.ext.builtOnly = true
	return c
}

// Envoy translates a Proxy into the Envoy resources of its role: the listener, its
// route configuration, the clusters and the ClusterLoadAssignments of EDS clusters;
// and the names of each type that may differ from the previous call for the role,
// so that publishing looks at those only. The virtual hosts of route configurations
// and the ClusterLoadAssignments are compact (compact): read their fields through
// xds.Expand.
func (c *Cache) Envoy(p *Proxy) (xds.Resources, xds.Changed) {
	rc := c.roles[p.Role]
	if rc == nil {
		rc = &roleCache{}
		rc.clusters.builtOnly = true
		c.roles[p.Role] = rc
	}
	out := xds.Resources{
		resourcev3.ListenerType: {},
		resourcev3.RouteType:    {},
	}
	changed := xds.Changed{}
	note := func(typ, name string) { changed[typ] = append(changed[typ], name) }
	if rc.listeners == nil {
		rc.listeners = map[string]*listenerCache{}
	}
	live := map[string]bool{}
	var vhds []map[string]types.Resource // of the listeners on VHDS
	for _, l := range p.Listeners {
		live[l.Name] = true
		lc := rc.listeners[l.Name]
		if lc == nil {
			lc = &listenerCache{}
			rc.listeners[l.Name] = lc
		}
		key := l.Name + "|" + l.Address + "|" + strconv.Itoa(int(l.Port)) + "|" + l.RouteConfig + "|" + strconv.FormatBool(l.TLS)
		if p.Extauthz != nil {
			key += "|" + p.Extauthz.Cluster + "|" + p.Extauthz.Timeout.String()
		}
		key += "|" + l.Tracing.key()
		vhs, changed := lc.vhosts.update(chunked.Of(l.VirtualHosts), func(vh *VirtualHost) *routev3.VirtualHost { return compact(EnvoyVirtualHost(vh)) }, nil)
		for _, vh := range lc.vhosts.removed {
			lc.options.count(vh, -1)
		}
		for _, vh := range lc.vhosts.added {
			lc.options.count(vh, +1)
		}
		key += "|" + lc.options.key()
		if l.TLS {
			// Every virtual host is a filter chain (domains, certificate, options).
			for _, vh := range l.VirtualHosts {
				key += "|" + vh.Name + "@" + vh.Hash
			}
		}
		if key != lc.key {
			lc.key, lc.listener = key, EnvoyListener(l, p.Extauthz)
			note(resourcev3.ListenerType, l.Name)
		}
		out[resourcev3.ListenerType][l.Name] = lc.listener
		if !l.TLS && l.VirtualHostDiscovery {
			lc.vhdsUpdate(l, note)
			if lc.routes == nil || lc.routes.GetName() != l.RouteConfig || lc.routes.GetVhds() == nil {
				if lc.routes != nil && lc.routes.GetName() != l.RouteConfig {
					note(resourcev3.RouteType, lc.routes.GetName()) // renamed: the old name goes
				}
				lc.routes = EnvoyVHDSRouteConfiguration(l.RouteConfig)
				note(resourcev3.RouteType, l.RouteConfig)
			}
			out[resourcev3.RouteType][l.RouteConfig] = lc.routes
			vhds = append(vhds, lc.vhds)
			continue
		}
		lc.vhdsUpdate(nil, note)
		if !l.TLS {
			if changed || lc.routes == nil || lc.routes.GetName() != l.RouteConfig || lc.routes.GetVhds() != nil {
				if lc.routes != nil {
					note(resourcev3.RouteType, lc.routes.GetName()) // renamed: the old name goes
				}
				lc.routes = EnvoyRouteConfiguration(l.RouteConfig, vhs)
				note(resourcev3.RouteType, l.RouteConfig)
			}
			out[resourcev3.RouteType][l.RouteConfig] = lc.routes
			continue
		}
		per := make(map[*routev3.VirtualHost]*routev3.RouteConfiguration, len(vhs))
		for i, v := range vhs {
			r := lc.perHost[v]
			if r == nil {
				r = EnvoyRouteConfiguration(HTTPSRouteConfig(l.VirtualHosts[i]), []*routev3.VirtualHost{v})
				note(resourcev3.RouteType, r.GetName())
			}
			per[v] = r
			out[resourcev3.RouteType][r.GetName()] = r
		}
		for v, r := range lc.perHost {
			if per[v] == nil {
				note(resourcev3.RouteType, r.GetName())
			}
		}
		lc.perHost = per
	}
	for name, lc := range rc.listeners {
		if !live[name] {
			delete(rc.listeners, name)
			note(resourcev3.ListenerType, name)
			if lc.routes != nil {
				note(resourcev3.RouteType, lc.routes.GetName())
			}
			for _, r := range lc.perHost {
				note(resourcev3.RouteType, r.GetName())
			}
			lc.vhdsUpdate(nil, note)
		}
	}
	if len(vhds) > 0 {
		out[resourcev3.VirtualHostType] = virtualHosts(vhds)
	}
	rc.secrets.update(chunked.Of(p.Secrets), EnvoySecret, nil)
	for _, m := range rc.secrets.added {
		note(resourcev3.SecretType, m.Name)
	}
	for _, m := range rc.secrets.removed {
		note(resourcev3.SecretType, m.Name)
	}
	if rc.sdsOut == nil || len(rc.secrets.added)+len(rc.secrets.removed) > 0 {
		rc.sdsOut = make(map[string]types.Resource, len(p.Secrets))
		for _, c := range p.Secrets {
			rc.sdsOut[c.Name] = rc.secrets.built[c]
		}
	}
	out[resourcev3.SecretType] = rc.sdsOut
	var ext Extauthz
	if p.Extauthz != nil {
		ext = Extauthz{Cluster: p.Extauthz.Cluster, TLSSDSDir: p.Extauthz.TLSSDSDir}
	}
	// The clusters whose HTTP/2 or TLS setting changes are built again.
	var rebuild func(*Cluster) bool
	if ext != rc.ext {
		old := rc.ext.Cluster
		rebuild = func(m *Cluster) bool { return m.Name == ext.Cluster || m.Name == old }
	}
	rc.ext = ext
	rc.clusters.update(p.Clusters, func(m *Cluster) envoyCluster {
		cl, cla := EnvoyCluster(m, &ext)
		if cla != nil {
			cla = compact(cla)
		}
		return envoyCluster{cl, cla}
	}, rebuild)
	if rc.cdsOut == nil || len(rc.clusters.added)+len(rc.clusters.removed) > 0 {
		// Edited in place, every name edited noted (see Cache).
		cds, eds := rc.cdsOut, rc.edsOut
		if cds == nil {
			cds, eds = make(map[string]types.Resource, p.Clusters.Len()), make(map[string]types.Resource, p.Clusters.Len())
		}
		for _, m := range rc.clusters.removed {
			delete(cds, m.Name)
			delete(eds, m.Name)
			note(resourcev3.ClusterType, m.Name)
			note(resourcev3.EndpointType, m.Name)
		}
		for _, m := range rc.clusters.added {
			ec := rc.clusters.built[m]
			cds[m.Name] = ec.cluster
			if ec.cla != nil {
				eds[m.Name] = ec.cla
			} else {
				delete(eds, m.Name)
			}
			note(resourcev3.ClusterType, m.Name)
			note(resourcev3.EndpointType, m.Name)
		}
		rc.cdsOut, rc.edsOut = cds, eds
	}
	if tk := p.Tracing.key(); tk != rc.tracing {
		delete(rc.cdsOut, CollectorCluster)
		if p.Tracing != nil {
			rc.cdsOut[CollectorCluster] = EnvoyCollectorCluster(p.Tracing)
		}
		rc.tracing = tk
		note(resourcev3.ClusterType, CollectorCluster)
	}
	out[resourcev3.ClusterType] = rc.cdsOut
	out[resourcev3.EndpointType] = rc.edsOut
	return out, changed
}

// ExtAuthConfigs are the resources of the extauth role, named by config_id, and the
// names that may differ from the previous call.
func (c *Cache) ExtAuthConfigs(cfgs chunked.List[*extauthv1.ExtAuthConfig]) (map[string]types.Resource, []string) {
	c.ext.update(cfgs, func(m *extauthv1.ExtAuthConfig) *extauthv1.ExtAuthConfig { return m }, nil)
	var changed []string
	if c.extOut == nil || len(c.ext.added)+len(c.ext.removed) > 0 {
		out := c.extOut // edited in place, every name edited reported (see Cache)
		if out == nil {
			out = make(map[string]types.Resource, cfgs.Len())
		}
		for _, m := range c.ext.removed {
			delete(out, m.GetConfigId())
			changed = append(changed, m.GetConfigId())
		}
		for _, m := range c.ext.added {
			out[m.GetConfigId()] = m
			changed = append(changed, m.GetConfigId())
		}
		c.extOut = out
	}
	return c.extOut, changed
}
