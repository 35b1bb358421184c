package translate

import (
	"fmt"
	"net"
	"sort"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// ClusterOf translates an Upstream into the proxies model, with every problem of it.
func ClusterOf(u *apiv1.Upstream, hash string) (*Cluster, error) {
	var errs fieldErrors
	c := &Cluster{Name: ClusterName(u.Metadata.ID()), Hash: hash}
	st := u.Spec.Static
	switch {
	case st != nil && u.Spec.Kube != nil:
		errs.add("spec", "names both static and kube; an upstream is one kind")
	case u.Spec.Kube != nil && u.Spec.Kube.Endpoints == nil:
		errs.add("spec.kube", "is served only by the Kubernetes source (gatehouse controlplane --kube), which discovers its endpoints; use spec.static")
	case u.Spec.Kube != nil:
		// The Kubernetes source fills in the ready endpoints; they are IPs, so the
		// cluster is an EDS cluster and an endpoint change touches its EDS only.
		c.Discovered = true
		for _, h := range u.Spec.Kube.Endpoints {
			c.Hosts = append(c.Hosts, Host{Addr: h.Addr, Port: uint32(h.Port)})
		}
	case st == nil:
		errs.add("spec.static", "is required (or spec.kube, with the Kubernetes source)")
	default:
		if len(st.Hosts) == 0 {
			errs.add("spec.static.hosts", "at least one host is required")
		}
		if st.UseTLS {
			// Serving it without TLS would send the traffic in the clear.
			errs.add("spec.static.useTls", "not supported yet; the upstream is not served rather than served without TLS")
		}
		for i, h := range st.Hosts {
			path := fmt.Sprintf("spec.static.hosts[%d]", i)
			if h.Addr == "" {
				errs.add(path+".addr", "is required")
			}
			if h.Port <= 0 || h.Port > 65535 {
				errs.addf(path+".port", "%d is not a port", h.Port)
			}
			c.Hosts = append(c.Hosts, Host{Addr: h.Addr, Port: uint32(h.Port)})
		}
	}
	if err := errs.err("upstream " + u.Metadata.ID()); err != nil {
		return nil, err
	}
	return c, nil
}

// IPOnly says whether every host is an IP address: such a cluster's endpoints are
// served over EDS; a cluster with a host name is resolved by the proxy (STRICT_DNS).
func (c *Cluster) IPOnly() bool {
	for _, h := range c.Hosts {
		if net.ParseIP(h.Addr) == nil {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
