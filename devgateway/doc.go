// Package devgateway is a small HTTP front that plays Envoy's part for the subset of the
// Envoy config Gatehouse generates, on a laptop and in end-to-end tests: virtual hosts
// (inline or over VHDS), domains, prefix routes, clusters (EDS, static, DNS), per-route
// ext_authz (config_id or disabled), request header removal, TLS listeners with SDS
// certificates, mutual TLS to the ext_authz server with certificates from SDS files
// (Settings spec.extauth.tls), and the route options' filters (header_to_metadata,
// Gatehouse's one early-stage Lua script, jwt_authn with remote key sets, rbac;
// docs/route-options.md). It reads the same protos Envoy would get, over xDS (Proxy),
// and refuses what it does not implement rather than ignoring it.
// It is not a production proxy: production is Envoy.
package devgateway

import (
	"strings"
	"time"
)

// ExtAuthzFilterName is the key of the ext_authz per-route config.
const ExtAuthzFilterName = "envoy.filters.http.ext_authz"

// DefaultCheckTimeout is the ext_authz call timeout when none is configured (Envoy's
// ext_authz default).
const DefaultCheckTimeout = 200 * time.Millisecond

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}
