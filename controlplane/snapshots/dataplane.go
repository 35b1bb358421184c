package snapshots

import (
	"fmt"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// DataPlane says how far each resource that serves has reached the clients: for an
// AuthConfig, how many connected extauth replicas acknowledged its current version
// ("extauth 2/2"); for a VirtualService, how many proxies of its role acknowledged the
// route configurations and virtual hosts now published ("proxies 1/1"), or that it
// waits for extauth.
// The strings are in the order of rs; "" for a resource that does not serve or of
// another kind, and all "" when o cannot tell.
func DataPlane(o Options, rs []*validate.Resource) []string {
	out := make([]string, len(rs))
	if o.ServedBy == nil || o.CaughtUp == nil {
		return out
	}
	var acs []string
	var at []int
	for i, r := range rs {
		if r.Kind == apiv1.KindAuthConfig && r.Serving != "" {
			acs = append(acs, r.ID())
			at = append(at, i)
		}
	}
	if len(acs) > 0 {
		counts, total := o.ServedBy(xds.RoleExtauth, xds.ExtAuthConfigType, acs)
		for j, i := range at {
			out[i] = share("extauth", counts[j], total)
		}
	}
	var proxies string
	for i, r := range rs {
		if r.Kind != apiv1.KindVirtualService || r.Serving == "" {
			continue
		}
		if o.Held != nil && o.Held(r.ID()) {
			out[i] = "waiting for extauth to acknowledge its AuthConfig"
			continue
		}
		if proxies == "" {
			n, total := o.CaughtUp(xds.DefaultProxyRole, xds.RouteType, xds.VirtualHostType)
			proxies = share("proxies", n, total)
		}
		out[i] = proxies
	}
	return out
}

// share is "<who> n/total", or "no <who> connected".
func share(who string, n, total int) string {
	if total == 0 {
		return "no " + who + " connected"
	}
	return fmt.Sprintf("%s %d/%d", who, n, total)
}
