package translate

import (
	"fmt"
	"strings"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// VirtualHostOf translates a VirtualService into the proxies model. It checks the
// VirtualService on its own (every problem, with field paths) and lists what it
// references in Refs, which the caller checks against the other resources. The
// VirtualHost is returned even with an error, for its Refs.
func VirtualHostOf(vs *apiv1.VirtualService, hash string) (*VirtualHost, error) {
	var errs fieldErrors
	ns := vs.Metadata.Namespace
	vh := &VirtualHost{Name: vs.Metadata.ID(), Hash: hash, Domains: vs.Spec.VirtualHost.Domains}
	if len(vh.Domains) == 0 {
		vh.Domains = []string{"*"}
	}
	seen := map[string]bool{}
	for i, d := range vh.Domains {
		path := fmt.Sprintf("spec.virtualHost.domains[%d]", i)
		switch ld := strings.ToLower(d); {
		case d == "":
			errs.add(path, "must not be empty")
		case seen[ld]:
			errs.addf(path, "%q is listed twice", d)
		default:
			seen[ld] = true
		}
	}
	if ssl := vs.Spec.SSLConfig; ssl != nil {
		if ssl.SecretRef.Name == "" {
			errs.add("spec.sslConfig.secretRef.name", "is required: name the TLS Secret")
		} else {
			vh.TLSSecret = ssl.SecretRef.ID(ns)
			vh.Refs = append(vh.Refs, Ref{Kind: apiv1.KindSecret, ID: vh.TLSSecret, Path: "spec.sslConfig.secretRef", SecretType: apiv1.TLSSecretType})
		}
	}
	if len(vs.Spec.VirtualHost.Routes) == 0 {
		errs.add("spec.virtualHost.routes", "at least one route is required")
	}
	for i, r := range vs.Spec.VirtualHost.Routes {
		modelRoutes(vh, ns, r, fmt.Sprintf("spec.virtualHost.routes[%d]", i), &errs)
	}
	return vh, errs.err("virtualservice " + vh.Name)
}

// modelRoutes adds one Route per matcher of r (a route without matchers matches "/").
func modelRoutes(vh *VirtualHost, ns string, r apiv1.Route, path string, errs *fieldErrors) {
	cluster := modelDestination(vh, ns, r.RouteAction, path+".routeAction", errs)
	authConfig, remove, opts := modelOptions(vh, ns, r.Options, path, errs)
	matchers := r.Matchers
	if len(matchers) == 0 {
		matchers = []apiv1.Matcher{{Prefix: "/"}}
	}
	for j, m := range matchers {
		name := fmt.Sprintf("%s.matchers[%d]", path, j)
		if m.Prefix == "" || m.Prefix[0] != '/' {
			errs.addf(name+".prefix", "%q must start with \"/\"", m.Prefix)
			continue
		}
		vh.Routes = append(vh.Routes, &Route{Name: name, Prefix: m.Prefix, Cluster: cluster,
			AuthConfig: authConfig, RequestHeadersToRemove: remove, Options: opts})
	}
}

func modelDestination(vh *VirtualHost, ns string, ra *apiv1.RouteAction, path string, errs *fieldErrors) string {
	if ra == nil || ra.Single == nil {
		errs.add(path+".single", "is required")
		return ""
	}
	var id string
	switch d := ra.Single; {
	case d.Upstream != nil && d.Kube != nil:
		errs.add(path+".single", "names both upstream and kube; a destination names one")
		return ""
	case d.Upstream != nil:
		if d.Upstream.Name == "" {
			errs.add(path+".single.upstream.name", "is required")
			return ""
		}
		id = d.Upstream.ID(ns)
		path += ".single.upstream"
	case d.Kube != nil:
		kns := d.Kube.Ref.Namespace
		if kns == "" {
			kns = ns
		}
		// Discovered upstreams are named <namespace>-<service>-<port> (sanitized, at most
		// 63 characters) in the service's namespace.
		id = kns + "." + apiv1.KubeUpstreamName(kns, d.Kube.Ref.Name, d.Kube.Ref.Port)
		path += ".single.kube.ref"
	default:
		errs.add(path+".single", "names neither upstream nor kube")
		return ""
	}
	vh.Refs = append(vh.Refs, Ref{Kind: apiv1.KindUpstream, ID: id, Path: path})
	return ClusterName(id)
}

// modelOptions returns the route's AuthConfig id, the headers to remove and its other
// options. routePath is the route's field path; its options are under ".options".
func modelOptions(vh *VirtualHost, ns string, o *apiv1.RouteOptions, routePath string, errs *fieldErrors) (string, []string, *RouteOptions) {
	if o == nil {
		return "", nil, nil
	}
	path := routePath + ".options"
	var authConfig string
	var remove []string
	if o.Extauth != nil && o.Extauth.ConfigRef != nil {
		if o.Extauth.ConfigRef.Name == "" {
			errs.add(path+".extauth.configRef.name", "is required")
		} else {
			authConfig = o.Extauth.ConfigRef.ID(ns)
			vh.Refs = append(vh.Refs, Ref{Kind: apiv1.KindAuthConfig, ID: authConfig, Path: path + ".extauth.configRef"})
		}
	}
	if o.HeaderManipulation != nil {
		remove = o.HeaderManipulation.RequestHeadersToRemove
		for i, h := range remove {
			if !validHeaderName(h) {
				errs.addf(fmt.Sprintf("%s.headerManipulation.requestHeadersToRemove[%d]", path, i), "%q is not a header name", h)
			}
		}
	}
	if o.JWT != nil {
		for _, name := range sortedKeys(o.JWT.Providers) {
			if j := o.JWT.Providers[name].JWKS; j != nil && j.Remote != nil && j.Remote.UpstreamRef.Name != "" {
				vh.Refs = append(vh.Refs, Ref{Kind: apiv1.KindUpstream, ID: j.Remote.UpstreamRef.ID(ns),
					Path: path + ".jwt.providers." + name + ".jwks.remote.upstreamRef"})
			}
		}
	}
	key := vh.Name + "/" + strings.TrimPrefix(routePath, "spec.virtualHost.")
	return authConfig, remove, modelRouteOptions(vh, ns, o, key, path, errs)
}

func validHeaderName(v string) bool {
	for _, r := range v {
		if !(r == '-' || r == '_' || r == ':' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return false
		}
	}
	return v != ""
}
