package devgateway_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	h2mv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// envoyView is the Envoy resources of the conformance fixture, read the way Envoy reads
// them. predict answers a request from them alone: route matching, header_to_metadata,
// the early Lua stage's data, jwt_authn's requirement and providers, RBACPerRoute and
// request_headers_to_remove. Signatures are Envoy's business: a token counts as
// verifiable when it is signed by the published key (signGood) and arrives intact.
type envoyView struct {
	filters []string
	jwt     *jwtv3.JwtAuthentication
	routes  *routev3.RouteConfiguration
}

func newEnvoyView(t *testing.T, res xds.Resources) *envoyView {
	t.Helper()
	v := &envoyView{}
	l := res[xds.ListenerType]["http"].(*listenerv3.Listener)
	var h hcmv3.HttpConnectionManager
	if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&h); err != nil {
		t.Fatal(err)
	}
	for _, f := range h.GetHttpFilters() {
		v.filters = append(v.filters, f.GetName())
		if f.GetName() == translate.JWTFilterName {
			v.jwt = &jwtv3.JwtAuthentication{}
			if err := f.GetTypedConfig().UnmarshalTo(v.jwt); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{translate.HeaderToMetadataFilterName, translate.LuaFilterName, translate.JWTFilterName, translate.RBACFilterName, translate.ExtAuthzFilterName, "envoy.filters.http.router"}
	if strings.Join(v.filters, ",") != strings.Join(want, ",") {
		t.Fatalf("HTTP filters %v, want %v: claims must be headers and metadata before RBAC (and ext_authz) see the request", v.filters, want)
	}
	v.routes = res[xds.RouteType]["http"].(*routev3.RouteConfiguration)
	return v
}

// checkProviders: every provider fetches its keys through the cluster of the key set's
// Upstream, asynchronously, with a cache duration, and leaves its payload in metadata.
func (v *envoyView) checkProviders(t *testing.T, cluster, uri string) {
	if len(v.jwt.GetProviders()) == 0 {
		t.Fatal("no jwt providers")
	}
	for name, p := range v.jwt.GetProviders() {
		rj := p.GetRemoteJwks()
		if rj.GetHttpUri().GetCluster() != cluster || rj.GetHttpUri().GetUri() != uri || rj.GetAsyncFetch() == nil || rj.GetCacheDuration() == nil || p.GetPayloadInMetadata() == "" {
			t.Errorf("provider %s: %v", name, p)
		}
	}
}

type prediction struct {
	status   int
	body     string
	upstream map[string]string
	extauth  map[string]string // what ext_authz sees; nil when the route does not reach it
}

func (v *envoyView) route(host, path string) *routev3.Route {
	var vh *routev3.VirtualHost
	for _, h := range v.routes.GetVirtualHosts() {
		for _, d := range h.GetDomains() {
			if d == host || (d == "*" && vh == nil) {
				vh = h
			}
		}
	}
	for _, r := range vh.GetRoutes() {
		if strings.HasPrefix(path, r.GetMatch().GetPrefix()) {
			return r
		}
	}
	return nil
}

func (v *envoyView) predict(t *testing.T, c confCase, h http.Header, token string) prediction {
	t.Helper()
	r := v.route(c.host, c.path)
	if r == nil {
		return prediction{status: 404}
	}
	per := r.GetTypedPerFilterConfig()
	md := map[string]map[string]any{}
	// header_to_metadata: the first value, rewritten, if not empty.
	if a := per[translate.HeaderToMetadataFilterName]; a != nil {
		var cfg h2mv3.Config
		if err := a.UnmarshalTo(&cfg); err != nil {
			t.Fatal(err)
		}
		for _, rule := range cfg.GetRequestRules() {
			vs := h.Values(rule.GetHeader())
			if len(vs) == 0 {
				continue
			}
			kv := rule.GetOnHeaderPresent()
			rw := kv.GetRegexValueRewrite()
			subst := regexp.MustCompile(`\\([0-9])`).ReplaceAllString(rw.GetSubstitution(), `$${$1}`)
			val := regexp.MustCompile(rw.GetPattern().GetRegex()).ReplaceAllString(vs[0], subst)
			if val != "" {
				if md[kv.GetMetadataNamespace()] == nil {
					md[kv.GetMetadataNamespace()] = map[string]any{}
				}
				md[kv.GetMetadataNamespace()][kv.GetKey()] = val
			}
		}
	}
	// The Lua stage's data: remove, then set the templates.
	if st := r.GetMetadata().GetFilterMetadata()[translate.LuaFilterName]; st != nil {
		cfg := st.GetFields()[translate.LuaMetadataKey].GetStructValue().GetFields()
		for _, n := range cfg["remove"].GetListValue().GetValues() {
			h.Del(n.GetStringValue())
		}
		for _, hv := range cfg["headers"].GetListValue().GetValues() {
			f := hv.GetStructValue().GetFields()
			var b strings.Builder
			for _, pv := range f["parts"].GetListValue().GetValues() {
				pf := pv.GetStructValue().GetFields()
				if k := pf["value"].GetStringValue(); k != "" {
					s, _ := md[translate.TransformationNamespace][k].(string)
					b.WriteString(s)
				} else {
					b.WriteString(pf["text"].GetStringValue())
				}
			}
			h.Set(f["name"].GetStringValue(), b.String())
		}
	}
	// jwt_authn: the route's requirement, any one provider.
	var payload map[string]any
	if a := per[translate.JWTFilterName]; a != nil {
		var pr jwtv3.PerRouteConfig
		if err := a.UnmarshalTo(&pr); err != nil {
			t.Fatal(err)
		}
		req := v.jwt.GetRequirementMap()[pr.GetRequirementName()]
		names := []string{req.GetProviderName()}
		if any := req.GetRequiresAny(); any != nil {
			names = nil
			for _, s := range any.GetRequirements() {
				names = append(names, s.GetProviderName())
			}
		}
		failure := "Jwt is missing"
		for _, n := range names {
			p := v.jwt.GetProviders()[n]
			found, from := "", ""
			for _, fh := range p.GetFromHeaders() {
				if val := h.Get(fh.GetName()); val != "" && strings.HasPrefix(val, fh.GetValuePrefix()) {
					found, from = strings.TrimPrefix(val, fh.GetValuePrefix()), fh.GetName()
					break
				}
			}
			if found == "" {
				continue
			}
			cl := c.token.claims
			exp, _ := cl["exp"].(int64)
			switch {
			case found != token || c.token.sign != signGood:
				failure = "not verifiable"
				if c.token.sign == signForged {
					failure = "Jwt verification fails"
				}
				continue
			case p.GetIssuer() != "" && cl["iss"] != p.GetIssuer():
				failure = "Jwt issuer is not configured"
				continue
			case time.Unix(exp, 0).Before(time.Now().Add(-time.Minute)):
				failure = "Jwt is expired"
				continue
			}
			for _, ch := range p.GetClaimToHeaders() {
				if s, ok := cl[ch.GetClaimName()].(string); ok && s != "" {
					h.Add(ch.GetHeaderName(), s)
				}
			}
			if !p.GetForward() {
				h.Del(from)
			}
			payload = cl
			failure = ""
			break
		}
		if failure != "" {
			return prediction{status: 401, body: failure}
		}
	}
	// RBAC on the route.
	if a := per[translate.RBACFilterName]; a != nil {
		var rp rbacfilterv3.RBACPerRoute
		if err := a.UnmarshalTo(&rp); err != nil {
			t.Fatal(err)
		}
		allowed := false
		for _, pol := range rp.GetRbac().GetRules().GetPolicies() {
			if anyPermission(pol.GetPermissions(), c.method, c.path) && anyPrincipal(pol.GetPrincipals(), payload) {
				allowed = true
			}
		}
		if !allowed {
			return prediction{status: 403, body: "RBAC: access denied"}
		}
	}
	flat := func() map[string]string {
		out := map[string]string{}
		for k, vs := range h {
			out[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		return out
	}
	// ext_authz, after rbac: on a route whose per-route config is not disabled.
	var ext map[string]string
	if a := per[translate.ExtAuthzFilterName]; a != nil {
		var ea extauthzv3.ExtAuthzPerRoute
		if err := a.UnmarshalTo(&ea); err != nil {
			t.Fatal(err)
		}
		if !ea.GetDisabled() {
			ext = flat()
		}
	}
	for _, n := range r.GetRequestHeadersToRemove() {
		h.Del(n)
	}
	return prediction{status: 200, upstream: flat(), extauth: ext}
}

func anyPermission(ps []*rbacv3.Permission, method, path string) bool {
	for _, p := range ps {
		if permits(p, method, path) {
			return true
		}
	}
	return false
}

func permits(p *rbacv3.Permission, method, path string) bool {
	switch {
	case p.GetAny():
		return true
	case p.GetAndRules() != nil:
		for _, r := range p.GetAndRules().GetRules() {
			if !permits(r, method, path) {
				return false
			}
		}
		return true
	case p.GetOrRules() != nil:
		return anyPermission(p.GetOrRules().GetRules(), method, path)
	case p.GetUrlPath() != nil:
		return strings.HasPrefix(path, p.GetUrlPath().GetPath().GetPrefix())
	case p.GetHeader() != nil && p.GetHeader().GetName() == ":method":
		return method == p.GetHeader().GetStringMatch().GetExact()
	}
	return false
}

func anyPrincipal(ids []*rbacv3.Principal, payload map[string]any) bool {
	for _, id := range ids {
		ok := true
		for _, m := range id.GetAndIds().GetIds() {
			md := m.GetMetadata()
			segs := md.GetPath()
			if md.GetFilter() != translate.JWTFilterName || len(segs) != 2 || segs[0].GetKey() != translate.JWTPayloadKey {
				return false
			}
			if s, _ := payload[segs[1].GetKey()].(string); s != md.GetValue().GetStringMatch().GetExact() {
				ok = false
			}
		}
		if ok && len(id.GetAndIds().GetIds()) > 0 {
			return true
		}
	}
	return false
}
