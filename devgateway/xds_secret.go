package devgateway

import (
	"crypto/tls"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// secretSpec is a Secret. Only TLS certificates are used; other kinds are kept so a
// listener that names them finds them.
type secretSpec struct {
	cert *tls.Certificate // nil when the secret is no TLS certificate
}

// parseSecret never puts secret material in a problem: tls.X509KeyPair's errors do not
// quote the key.
func parseSecret(s *tlsv3.Secret, pr *problems) *secretSpec {
	pr.only(s, "", "name", "tls_certificate", "validation_context", "generic_secret", "session_ticket_keys")
	tc := s.GetTlsCertificate()
	if tc == nil {
		return &secretSpec{}
	}
	pr.only(tc, "tls_certificate", "certificate_chain", "private_key")
	chain := inlineData(tc.GetCertificateChain(), "tls_certificate.certificate_chain", pr)
	key := inlineData(tc.GetPrivateKey(), "tls_certificate.private_key", pr)
	if chain == nil || key == nil {
		return &secretSpec{}
	}
	cert, err := tls.X509KeyPair(chain, key)
	if err != nil {
		pr.addf("tls_certificate", "not a usable certificate and key: %v", err)
		return &secretSpec{}
	}
	return &secretSpec{cert: &cert}
}

func inlineData(d *corev3.DataSource, path string, pr *problems) []byte {
	switch s := d.GetSpecifier().(type) {
	case *corev3.DataSource_InlineBytes:
		return s.InlineBytes
	case *corev3.DataSource_InlineString:
		return []byte(s.InlineString)
	}
	pr.addf(path, "only inline_bytes and inline_string are supported")
	return nil
}
