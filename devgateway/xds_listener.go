package devgateway

import (
	"fmt"
	"net/http"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// listenerSpec is a Listener the gateway can serve.
type listenerSpec struct {
	name   string
	port   uint32
	tls    bool
	chains []*chainSpec
}

type chainSpec struct {
	serverNames []string
	secret      string // the SDS secret of its certificate; "" for plain text
	hcm         *hcmSpec
}

type hcmSpec struct {
	rds         string     // the RouteConfiguration to take over RDS
	inline      *routeSpec // or the one inline
	authz       *authzSpec // nil without an ext_authz filter
	opts        optionFilters
	port        portMode
	noRequestID bool
}

type authzSpec struct {
	name          string // the filter's name, the key of its per-route config
	cluster       string
	timeout       time.Duration
	failureAllow  bool
	failureHeader bool
	statusOnError int
	rawHeaders    bool // encode_raw_headers: send header_map with raw values
}

func parseListener(l *listenerv3.Listener, pr *problems) *listenerSpec {
	pr.only(l, "", "name", "address", "filter_chains", "listener_filters", "stat_prefix", "per_connection_buffer_limit_bytes", "traffic_direction")
	s := &listenerSpec{name: l.GetName()}
	if sa := l.GetAddress().GetSocketAddress(); sa == nil {
		pr.addf("address", "only socket addresses are supported")
	} else {
		pr.only(sa, "address.socket_address", "address", "port_value", "ipv4_compat")
		s.port = sa.GetPortValue()
	}
	for i, lf := range l.GetListenerFilters() {
		path := fmt.Sprintf("listener_filters[%d]", i)
		pr.only(lf, path, "name", "typed_config")
		if err := unpackTyped(lf.GetTypedConfig(), &tlsinspectorv3.TlsInspector{}); err != nil {
			pr.addf(path, "only the TLS inspector is supported: %v", err)
		}
	}
	for i, fc := range l.GetFilterChains() {
		s.chains = append(s.chains, parseChain(fc, fmt.Sprintf("filter_chains[%d]", i), pr))
	}
	plain := 0
	for _, c := range s.chains {
		if c.secret == "" {
			plain++
		}
	}
	switch {
	case len(s.chains) == 0:
		pr.addf("filter_chains", "at least one filter chain is required")
	case plain == 0:
		s.tls = true
	case plain > 1 || len(s.chains) > 1:
		pr.addf("filter_chains", "a plain-text listener has exactly one filter chain (TLS listeners may have one per server name)")
	}
	return s
}

func parseChain(fc *listenerv3.FilterChain, path string, pr *problems) *chainSpec {
	pr.only(fc, path, "name", "filter_chain_match", "filters", "transport_socket")
	c := &chainSpec{}
	if m := fc.GetFilterChainMatch(); m != nil {
		pr.only(m, join(path, "filter_chain_match"), "server_names", "transport_protocol")
		c.serverNames = lower(m.GetServerNames())
		if tp := m.GetTransportProtocol(); tp != "" && tp != "tls" {
			pr.addf(join(path, "filter_chain_match.transport_protocol"), "%q is not supported", tp)
		}
	}
	if ts := fc.GetTransportSocket(); ts != nil {
		c.secret = parseDownstreamTLS(ts, join(path, "transport_socket"), pr)
	} else if len(c.serverNames) > 0 {
		pr.addf(join(path, "filter_chain_match.server_names"), "needs a TLS transport socket")
	}
	if len(fc.GetFilters()) != 1 {
		pr.addf(join(path, "filters"), "exactly one filter, the HTTP connection manager, is supported")
	}
	for i, f := range fc.GetFilters() {
		fp := join(path, fmt.Sprintf("filters[%d]", i))
		pr.only(f, fp, "name", "typed_config")
		var h hcmv3.HttpConnectionManager
		if err := unpackTyped(f.GetTypedConfig(), &h); err != nil {
			pr.addf(fp, "only the HTTP connection manager is supported: %v", err)
			continue
		}
		c.hcm = parseHCM(&h, join(fp, "typed_config"), pr)
	}
	return c
}

func parseDownstreamTLS(ts *corev3.TransportSocket, path string, pr *problems) string {
	pr.only(ts, path, "name", "typed_config")
	var d tlsv3.DownstreamTlsContext
	if err := unpackTyped(ts.GetTypedConfig(), &d); err != nil {
		pr.addf(path, "only a DownstreamTlsContext is supported: %v", err)
		return "-"
	}
	tp := join(path, "typed_config")
	pr.only(&d, tp, "common_tls_context", "require_client_certificate")
	if d.GetRequireClientCertificate().GetValue() {
		pr.addf(join(tp, "require_client_certificate"), "client certificates are not supported by the dev gateway")
	}
	ctc := d.GetCommonTlsContext()
	cp := join(tp, "common_tls_context")
	pr.only(ctc, cp, "tls_certificate_sds_secret_configs", "alpn_protocols", "tls_params")
	sds := ctc.GetTlsCertificateSdsSecretConfigs()
	if len(sds) != 1 {
		pr.addf(join(cp, "tls_certificate_sds_secret_configs"), "exactly one certificate from SDS is supported")
		return "-"
	}
	sp := join(cp, "tls_certificate_sds_secret_configs[0]")
	pr.only(sds[0], sp, "name", "sds_config")
	configSource(sds[0].GetSdsConfig(), join(sp, "sds_config"), pr)
	return sds[0].GetName()
}

func parseHCM(h *hcmv3.HttpConnectionManager, path string, pr *problems) *hcmSpec {
	pr.only(h, path, "stat_prefix", "codec_type", "rds", "route_config", "http_filters", "strip_any_host_port",
		"strip_matching_host_port", "use_remote_address", "access_log", "generate_request_id", "server_name",
		"request_timeout", "stream_idle_timeout", "common_http_protocol_options", "http_protocol_options",
		"normalize_path", "merge_slashes", "path_with_escaped_slashes_action",
		// Tracing (Settings spec.tracing) is taken and not done: the dev gateway starts
		// no trace, and a request's own trace context still reaches extauth.
		"tracing")
	s := &hcmSpec{noRequestID: h.GetGenerateRequestId() != nil && !h.GetGenerateRequestId().GetValue()}
	// Path normalization changes which route a path matches; asked for and not done, a
	// request could reach a route the control plane meant to shield.
	if h.GetNormalizePath().GetValue() {
		pr.addf(join(path, "normalize_path"), "path normalization is not supported by the dev gateway")
	}
	if h.GetMergeSlashes() {
		pr.addf(join(path, "merge_slashes"), "not supported by the dev gateway")
	}
	switch a := h.GetPathWithEscapedSlashesAction(); a {
	case hcmv3.HttpConnectionManager_IMPLEMENTATION_SPECIFIC_DEFAULT, hcmv3.HttpConnectionManager_KEEP_UNCHANGED:
	default:
		pr.addf(join(path, "path_with_escaped_slashes_action"), "%s is not supported", a)
	}
	switch c := h.GetCodecType(); c {
	case hcmv3.HttpConnectionManager_AUTO, hcmv3.HttpConnectionManager_HTTP1:
	default:
		pr.addf(join(path, "codec_type"), "%s is not supported", c)
	}
	switch {
	case h.GetStripAnyHostPort():
		s.port = portStripAny
	case h.GetStripMatchingHostPort():
		s.port = portStripMatching
	}
	switch {
	case h.GetRds() != nil:
		rp := join(path, "rds")
		pr.only(h.GetRds(), rp, "config_source", "route_config_name")
		configSource(h.GetRds().GetConfigSource(), join(rp, "config_source"), pr)
		s.rds = h.GetRds().GetRouteConfigName()
	case h.GetRouteConfig() != nil:
		s.inline = parseRouteConfig(h.GetRouteConfig(), join(path, "route_config"), pr)
		if s.inline.vhds {
			pr.addf(join(path, "route_config.vhds"), "VHDS is supported for a route configuration taken over RDS only")
		}
	}
	s.authz, s.opts = parseHTTPFilters(h.GetHttpFilters(), join(path, "http_filters"), pr)
	return s
}

// parseHTTPFilters accepts, each at most once and in this order, header_to_metadata,
// Gatehouse's early-stage Lua, jwt_authn, rbac and ext_authz, then the router, last.
// Any other filter or order is refused: serving without a filter the control plane asked
// for, or in another order, could let a request through that the filters would stop.
func parseHTTPFilters(fs []*hcmv3.HttpFilter, path string, pr *problems) (*authzSpec, optionFilters) {
	var authz *authzSpec
	var opts optionFilters
	last := -1
	for i, f := range fs {
		fp := fmt.Sprintf("%s[%d]", path, i)
		tp := join(fp, "typed_config")
		pr.only(f, fp, "name", "typed_config", "is_optional")
		rank := -1
		switch f.GetTypedConfig().GetTypeUrl() {
		case "type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config":
			rank, opts.extract = rankExtract, f.GetName()
			parseHeaderToMetadata(f, tp, pr)
		case "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua":
			rank, opts.lua = rankLua, f.GetName()
			parseLua(f, tp, pr)
		case "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication":
			rank, opts.jwt = rankJWT, parseJWTFilter(f, tp, pr)
		case "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC":
			rank, opts.rbac = rankRBAC, f.GetName()
			parseRBACFilter(f, tp, pr)
		case "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz":
			rank, authz = rankAuthz, parseExtAuthz(f, tp, pr)
		case "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router":
			rank = rankRouter
			var r routerv3.Router
			if err := unpackTyped(f.GetTypedConfig(), &r); err != nil {
				pr.addf(fp, "%v", err)
			}
			pr.only(&r, tp, "dynamic_stats", "start_child_span", "suppress_envoy_headers")
		default:
			pr.addf(fp, "filter %s (%s) is not supported by the dev gateway; refused rather than served without it",
				f.GetName(), f.GetTypedConfig().GetTypeUrl())
			continue
		}
		switch {
		case rank == rankRouter && i != len(fs)-1:
			pr.addf(fp, "the router must be the last filter")
		case last == rankRouter:
		case rank == last:
			pr.addf(fp, "a second %s filter is not supported", f.GetName())
		case rank < last:
			pr.addf(fp, "%s comes after a filter it must precede (order: header_to_metadata, lua, jwt_authn, rbac, ext_authz, router)", f.GetName())
		}
		last = max(last, rank)
		if i == len(fs)-1 && rank != rankRouter {
			pr.addf(fp, "the router must be the last filter")
		}
	}
	if len(fs) == 0 {
		pr.addf(path, "the router filter is required")
	}
	return authz, opts
}

func parseExtAuthz(f *hcmv3.HttpFilter, path string, pr *problems) *authzSpec {
	var e extauthzv3.ExtAuthz
	if err := unpackTyped(f.GetTypedConfig(), &e); err != nil {
		pr.addf(path, "%v", err)
		return nil
	}
	pr.only(&e, path, "grpc_service", "transport_api_version", "failure_mode_allow", "failure_mode_allow_header_add",
		"status_on_error", "stat_prefix", "include_peer_certificate", "encode_raw_headers")
	if v := e.GetTransportApiVersion(); v != corev3.ApiVersion_V3 && v != corev3.ApiVersion_AUTO {
		pr.addf(join(path, "transport_api_version"), "%s is not supported (V3 only)", v)
	}
	g := e.GetGrpcService()
	if g == nil {
		pr.addf(join(path, "grpc_service"), "is required (http_service is not supported)")
		return nil
	}
	pr.only(g, join(path, "grpc_service"), "envoy_grpc", "timeout")
	eg := g.GetEnvoyGrpc()
	if eg == nil {
		pr.addf(join(path, "grpc_service.envoy_grpc"), "is required (google_grpc is not supported)")
		return nil
	}
	pr.only(eg, join(path, "grpc_service.envoy_grpc"), "cluster_name", "authority")
	s := &authzSpec{
		name: f.GetName(), cluster: eg.GetClusterName(), timeout: DefaultCheckTimeout,
		failureAllow: e.GetFailureModeAllow(), failureHeader: e.GetFailureModeAllowHeaderAdd(),
		statusOnError: http.StatusForbidden, rawHeaders: e.GetEncodeRawHeaders(),
	}
	if g.GetTimeout() != nil {
		s.timeout = g.GetTimeout().AsDuration()
	}
	if c := int(e.GetStatusOnError().GetCode()); c != 0 {
		s.statusOnError = c
	}
	return s
}
