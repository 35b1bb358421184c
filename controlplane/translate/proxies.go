package translate

// DefaultProxyRole is the gateway proxy every VirtualService is served on (the API
// has no field naming another one yet). It equals xds.DefaultProxyRole.
const DefaultProxyRole = "gatehouse-system~gateway-proxy"

// Accepted is what validation lets through, the input of the proxies stage.
type Accepted struct {
	Settings Settings
	// VirtualHosts are the accepted VirtualServices, in key order.
	VirtualHosts []*VirtualHost
	// Clusters are the accepted Upstreams, in key order.
	Clusters []*Cluster
	// Extauthz is the cluster of Settings.ExtauthzServer, nil when it does not serve.
	Extauthz *Cluster
}

// Proxies builds the proxies model: one Proxy per gateway proxy role, each with the
// HTTP listener and every accepted Upstream as a cluster.
func Proxies(a Accepted) []*Proxy {
	p := &Proxy{
		Role: DefaultProxyRole,
		Listeners: []*Listener{{
			Name: HTTPListenerName, Address: HTTPAddress, Port: HTTPPort, RouteConfig: HTTPRouteConfig,
			VirtualHosts: a.VirtualHosts,
		}},
		Clusters: a.Clusters,
	}
	if a.Extauthz != nil {
		p.Extauthz = &Extauthz{Cluster: a.Extauthz.Name, Timeout: a.Settings.RequestTimeout}
	}
	return []*Proxy{p}
}
