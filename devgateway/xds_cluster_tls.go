package devgateway

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"gatehouse.dev/gatehouse/internal/envoysds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// parseClusterTLS reads the transport socket of a cluster to an extauth server over
// mutual TLS (Settings spec.extauth.tls): TLS 1.3, the client certificate and CA from
// SDS files naming one certificate folder (gatehouse envoy sds), and a server that must
// name the extauth role. It returns that folder, which the gateway dials with
// mtls.ClientCredentials; anything else is refused, never served in plain text.
func parseClusterTLS(ts *corev3.TransportSocket, path string, pr *problems) string {
	pr.only(ts, path, "name", "typed_config")
	if ts.GetName() != wellknown.TransportSocketTls {
		pr.addf(join(path, "name"), "%q is not supported (%s)", ts.GetName(), wellknown.TransportSocketTls)
		return ""
	}
	tp := join(path, "typed_config")
	var ctx tlsv3.UpstreamTlsContext
	if err := unpackTyped(ts.GetTypedConfig(), &ctx); err != nil {
		pr.addf(tp, "%v", err)
		return ""
	}
	pr.only(&ctx, tp, "common_tls_context")
	cp := join(tp, "common_tls_context")
	common := ctx.GetCommonTlsContext()
	pr.only(common, cp, "tls_params", "alpn_protocols", "tls_certificate_sds_secret_configs", "combined_validation_context")
	params := common.GetTlsParams()
	pr.only(params, join(cp, "tls_params"), "tls_minimum_protocol_version", "tls_maximum_protocol_version")
	if params.GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 ||
		!slices.Contains([]tlsv3.TlsParameters_TlsProtocol{tlsv3.TlsParameters_TLS_AUTO, tlsv3.TlsParameters_TLSv1_3}, params.GetTlsMaximumProtocolVersion()) {
		pr.addf(join(cp, "tls_params"), "the gateway speaks TLS 1.3 only; set tls_minimum_protocol_version: TLSv1_3")
	}
	if alpn := common.GetAlpnProtocols(); len(alpn) > 0 && !slices.Equal(alpn, []string{"h2"}) {
		pr.addf(join(cp, "alpn_protocols"), "%v: only [h2] is supported (gRPC)", alpn)
	}
	combined := common.GetCombinedValidationContext()
	vp := join(cp, "combined_validation_context")
	if combined == nil {
		pr.addf(vp, "is required: the server's CA and a SAN matcher naming the extauth role")
		return ""
	}
	pr.only(combined, vp, "default_validation_context", "validation_context_sds_secret_config")
	def := combined.GetDefaultValidationContext()
	pr.only(def, join(vp, "default_validation_context"), "match_typed_subject_alt_names")
	sans := def.GetMatchTypedSubjectAltNames()
	want := envoysds.RoleSAN(mtls.RoleExtauth)
	if len(sans) != 1 || sans[0].GetSanType() != tlsv3.SubjectAltNameMatcher_URI || sans[0].GetMatcher().GetSafeRegex().GetRegex() != want ||
		sans[0].GetOid() != "" || sans[0].GetMatcher().GetIgnoreCase() {
		pr.addf(join(vp, "default_validation_context.match_typed_subject_alt_names"),
			"the gateway checks that the server names the extauth role: want one URI matcher with safe_regex %q", want)
	}
	certs := common.GetTlsCertificateSdsSecretConfigs()
	if len(certs) != 1 {
		pr.addf(join(cp, "tls_certificate_sds_secret_configs"), "want exactly one (the proxy's certificate)")
		return ""
	}
	cert, err := envoysds.ReadSecret(certs[0])
	if err != nil {
		pr.addf(join(cp, "tls_certificate_sds_secret_configs[0]"), "%v", err)
	}
	val, verr := envoysds.ReadSecret(combined.GetValidationContextSdsSecretConfig())
	if verr != nil {
		pr.addf(join(vp, "validation_context_sds_secret_config"), "%v", verr)
	}
	if err != nil || verr != nil {
		return ""
	}
	dir, err := envoysds.Folder(cert, val)
	if err != nil {
		pr.addf(cp, "%v", err)
	}
	return dir
}
