package mtls

import (
	"fmt"
	"strings"
)

// Component is one certificate of an installation: the folder it is written to (under
// the output folder, or the Secret it becomes), who it names, and the host names it
// carries besides (for tools that check host names; Gatehouse checks the role).
type Component struct {
	Name     string
	Identity Identity
	Hosts    []string
}

// Components are the certificates of an installation in namespace ns: the control plane
// ("controlplane"), extauth ("extauth") and one per gateway proxy ("proxy-<name>"),
// where proxies are names in ns or "<namespace>~<name>" roles.
func Components(trustDomain, ns string, proxies []string) ([]Component, error) {
	if trustDomain == "" || ns == "" {
		return nil, fmt.Errorf("mtls: a trust domain and a namespace are required")
	}
	out := []Component{
		{Name: RoleControlplane, Identity: Identity{trustDomain, ns, RoleControlplane}, Hosts: serviceHosts("controlplane", ns)},
		{Name: RoleExtauth, Identity: Identity{trustDomain, ns, RoleExtauth}, Hosts: serviceHosts("extauth", ns)},
	}
	seen := map[string]bool{}
	for _, p := range proxies {
		role := p
		if !strings.Contains(p, "~") {
			role = ProxyRole(ns, p)
		}
		if !IsProxyRole(role) {
			return nil, fmt.Errorf("mtls: proxy %q: want a name or <namespace>~<name>", p)
		}
		pns, name, _ := strings.Cut(role, "~")
		c := Component{Name: "proxy-" + name, Identity: Identity{trustDomain, pns, role}}
		if pns != ns {
			c.Name = "proxy-" + pns + "-" + name
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("mtls: proxy %q is named twice", p)
		}
		seen[c.Name] = true
		if _, err := c.Identity.ID(); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, c := range out[:2] {
		if _, err := c.Identity.ID(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// serviceHosts are the names a Service is reached by, and loopback.
func serviceHosts(svc, ns string) []string {
	return []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local", "localhost", "127.0.0.1", "::1"}
}
