package devgateway

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// parseRBACPerRoute compiles an RBACPerRoute; nil rules (no rbac) disable the filter
// for the route, as in Envoy.
func parseRBACPerRoute(c *rbacfilterv3.RBACPerRoute, path string, pr *problems) *rbacRules {
	pr.only(c, path, "rbac")
	if c.GetRbac() == nil {
		return nil
	}
	pr.only(c.GetRbac(), join(path, "rbac"), "rules")
	rules := c.GetRbac().GetRules()
	if rules == nil {
		return nil
	}
	rp := join(path, "rbac.rules")
	pr.only(rules, rp, "action", "policies")
	if rules.GetAction() != rbacv3.RBAC_ALLOW {
		pr.addf(join(rp, "action"), "%s is not supported (ALLOW)", rules.GetAction())
	}
	out := &rbacRules{}
	names := make([]string, 0, len(rules.GetPolicies()))
	for n := range rules.GetPolicies() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pol, pp := rules.GetPolicies()[n], rp+".policies["+n+"]"
		pr.only(pol, pp, "permissions", "principals")
		p := rbacPolicy{name: n}
		for i, perm := range pol.GetPermissions() {
			p.permissions = append(p.permissions, parsePermission(perm, fmt.Sprintf("%s.permissions[%d]", pp, i), pr))
		}
		for i, id := range pol.GetPrincipals() {
			p.principals = append(p.principals, parsePrincipal(id, fmt.Sprintf("%s.principals[%d]", pp, i), pr))
		}
		out.policies = append(out.policies, p)
	}
	return out
}

func never(*http.Request, dynMetadata) bool { return false }

func parsePermission(p *rbacv3.Permission, path string, pr *problems) rbacMatcher {
	switch r := p.GetRule().(type) {
	case *rbacv3.Permission_Any:
		return func(*http.Request, dynMetadata) bool { return r.Any }
	case *rbacv3.Permission_AndRules:
		var ms []rbacMatcher
		for i, sub := range r.AndRules.GetRules() {
			ms = append(ms, parsePermission(sub, fmt.Sprintf("%s.and_rules.rules[%d]", path, i), pr))
		}
		return allOf(ms)
	case *rbacv3.Permission_OrRules:
		var ms []rbacMatcher
		for i, sub := range r.OrRules.GetRules() {
			ms = append(ms, parsePermission(sub, fmt.Sprintf("%s.or_rules.rules[%d]", path, i), pr))
		}
		return func(req *http.Request, md dynMetadata) bool { return anyOf(ms, req, md) }
	case *rbacv3.Permission_UrlPath:
		m := parseStringMatch(r.UrlPath.GetPath(), join(path, "url_path.path"), pr)
		return func(req *http.Request, _ dynMetadata) bool { return m(urlPath(req)) }
	case *rbacv3.Permission_Header:
		h := r.Header
		pr.only(h, join(path, "header"), "name", "string_match")
		m := parseStringMatch(h.GetStringMatch(), join(path, "header.string_match"), pr)
		name := strings.ToLower(h.GetName())
		return func(req *http.Request, _ dynMetadata) bool {
			if name == ":method" {
				return m(req.Method)
			}
			vs := req.Header.Values(name)
			return len(vs) > 0 && m(strings.Join(vs, ","))
		}
	}
	pr.addf(path, "only any, and_rules, or_rules, url_path and header permissions are supported")
	return never
}

func parsePrincipal(p *rbacv3.Principal, path string, pr *problems) rbacMatcher {
	switch id := p.GetIdentifier().(type) {
	case *rbacv3.Principal_Any:
		return func(*http.Request, dynMetadata) bool { return id.Any }
	case *rbacv3.Principal_AndIds:
		var ms []rbacMatcher
		for i, sub := range id.AndIds.GetIds() {
			ms = append(ms, parsePrincipal(sub, fmt.Sprintf("%s.and_ids.ids[%d]", path, i), pr))
		}
		return allOf(ms)
	case *rbacv3.Principal_OrIds:
		var ms []rbacMatcher
		for i, sub := range id.OrIds.GetIds() {
			ms = append(ms, parsePrincipal(sub, fmt.Sprintf("%s.or_ids.ids[%d]", path, i), pr))
		}
		return func(req *http.Request, md dynMetadata) bool { return anyOf(ms, req, md) }
	case *rbacv3.Principal_Metadata:
		mm := id.Metadata
		mp := join(path, "metadata")
		pr.only(mm, mp, "filter", "path", "value")
		var keys []string
		for _, seg := range mm.GetPath() {
			keys = append(keys, seg.GetKey())
		}
		pr.only(mm.GetValue(), join(mp, "value"), "string_match")
		m := parseStringMatch(mm.GetValue().GetStringMatch(), join(mp, "value.string_match"), pr)
		filter := mm.GetFilter()
		return func(_ *http.Request, md dynMetadata) bool {
			v, ok := metadataString(md, filter, keys)
			return ok && m(v)
		}
	}
	pr.addf(path, "only any, and_ids, or_ids and metadata principals are supported")
	return never
}

func parseStringMatch(m *matcherv3.StringMatcher, path string, pr *problems) func(string) bool {
	if m == nil {
		pr.addf(path, "is required")
		return func(string) bool { return false }
	}
	pr.only(m, path, "exact", "prefix")
	switch p := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		return func(s string) bool { return s == p.Exact }
	case *matcherv3.StringMatcher_Prefix:
		return func(s string) bool { return strings.HasPrefix(s, p.Prefix) }
	}
	return func(string) bool { return false }
}
