package devgateway

import (
	"net/http"
	"strings"
)

// rbacDeniedBody is what Envoy's RBAC filter answers a denied request with (403).
const rbacDeniedBody = "RBAC: access denied"

// rbacRules is an ALLOW RBAC policy set: a request one policy matches is allowed.
type rbacRules struct {
	policies []rbacPolicy
}

type rbacPolicy struct {
	name        string
	permissions []rbacMatcher // any one
	principals  []rbacMatcher // any one
}

// rbacMatcher is a permission or a principal, compiled.
type rbacMatcher func(r *http.Request, md dynMetadata) bool

func (rr *rbacRules) allows(r *http.Request, md dynMetadata) bool {
	for _, p := range rr.policies {
		if anyOf(p.permissions, r, md) && anyOf(p.principals, r, md) {
			return true
		}
	}
	return false
}

func anyOf(ms []rbacMatcher, r *http.Request, md dynMetadata) bool {
	for _, m := range ms {
		if m(r, md) {
			return true
		}
	}
	return false
}

func allOf(ms []rbacMatcher) rbacMatcher {
	return func(r *http.Request, md dynMetadata) bool {
		for _, m := range ms {
			if !m(r, md) {
				return false
			}
		}
		return true
	}
}

// metadataString finds the value at path in the filter's dynamic metadata.
func metadataString(md dynMetadata, filter string, path []string) (string, bool) {
	ns := md[filter]
	if ns == nil || len(path) == 0 {
		return "", false
	}
	var v any = ns
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[seg]; !ok {
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

// urlPath is the path RBAC's url_path matches: without the query, not decoded.
func urlPath(r *http.Request) string {
	p := r.URL.EscapedPath()
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}
