package translate

import (
	"slices"
	"strings"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// Accepted is what validation lets through, the input of the proxies stage.
type Accepted struct {
	Settings Settings
	// VirtualHosts are the accepted VirtualServices, in key order.
	VirtualHosts chunked.List[*VirtualHost]
	// Clusters are the accepted Upstreams, in key order.
	Clusters chunked.List[*Cluster]
	// Extauthz is the cluster of Settings.ExtauthzServer, nil when it does not serve.
	Extauthz *Cluster
	// TLSCerts are the serving TLS Secrets, by id.
	TLSCerts map[string]*TLSCert
}

// Proxies builds the proxies model: one Proxy per gateway proxy role, each with the
// HTTP listener (VirtualServices without sslConfig), the HTTPS listener when a
// VirtualService has sslConfig (those VirtualServices only, with their certificates),
// and every accepted Upstream as a cluster.
func Proxies(a Accepted) []*Proxy {
	var plain, tls []*VirtualHost
	for vh := range a.VirtualHosts.Values() {
		if vh.TLSSecret != "" && a.TLSCerts[vh.TLSSecret] != nil {
			tls = append(tls, vh)
		} else if vh.TLSSecret == "" {
			plain = append(plain, vh)
		}
	}
	p := &Proxy{
		Role: xds.DefaultProxyRole,
		Listeners: []*Listener{{
			Name: HTTPListenerName, Address: HTTPAddress, Port: HTTPPort, RouteConfig: HTTPRouteConfig,
			VirtualHostDiscovery: a.Settings.VirtualHostDiscovery, VirtualHosts: plain,
		}},
		Clusters: a.Clusters,
	}
	if len(tls) > 0 {
		p.Listeners = append(p.Listeners, &Listener{Name: HTTPSListenerName, Address: HTTPAddress, Port: HTTPSPort, TLS: true, VirtualHosts: tls})
		seen := map[string]bool{}
		for _, vh := range tls {
			if !seen[vh.TLSSecret] {
				seen[vh.TLSSecret] = true
				p.Secrets = append(p.Secrets, a.TLSCerts[vh.TLSSecret])
			}
		}
		slices.SortFunc(p.Secrets, func(x, y *TLSCert) int { return strings.Compare(x.Name, y.Name) })
	}
	if a.Extauthz != nil {
		p.Extauthz = &Extauthz{Cluster: a.Extauthz.Name, Timeout: a.Settings.RequestTimeout, TLSSDSDir: a.Settings.ExtauthTLSSDSDir}
	}
	if t := a.Settings.Tracing; t != nil {
		p.Tracing = t
		for _, l := range p.Listeners {
			l.Tracing = t
		}
	}
	return []*Proxy{p}
}

// ProxiesWithClusters is Proxies of an Accepted that differs from the one ps were made
// of in its clusters only: ps with every proxy's clusters replaced (the listeners, a
// pass over every virtual host to make, are kept). ps is left as it was.
func ProxiesWithClusters(ps []*Proxy, clusters chunked.List[*Cluster]) []*Proxy {
	out := make([]*Proxy, len(ps))
	for i, p := range ps {
		c := *p
		c.Clusters = clusters
		out[i] = &c
	}
	return out
}
