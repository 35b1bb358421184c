// Package envoysds is Envoy's file-based SDS for a Gatehouse certificate folder (mtls):
// the two SDS files that name the folder's files, and the upstream TLS context that
// takes Envoy's client certificate and CA from them and accepts one server role.
//
// The files live apart from the folder (in Kubernetes the folder is a read-only Secret
// mount; the files go in the bootstrap's ConfigMap), and never hold a key or a
// certificate: only the folder's file names.
package envoysds

import (
	"fmt"
	"path"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// The SDS files in an SDS folder, and the Secret each holds.
const (
	CertificateFile   = "sds-certificate.yaml"
	ValidationFile    = "sds-validation.yaml"
	CertificateSecret = "gatehouse-certificate"
	ValidationSecret  = "gatehouse-validation"
)

// SecretType is the type URL of the Secrets in the SDS files.
const SecretType = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"

// RoleSAN is the regular expression of the URI SAN of a certificate naming role
// (mtls.RoleControlplane or mtls.RoleExtauth), in any trust domain and namespace: the
// CA of the folder is what pins the trust domain.
func RoleSAN(role string) string {
	return `^spiffe://[^/]+/ns/[^/]+/role/` + role + `$`
}

// CheckDir says why dir cannot name a folder in Envoy's configuration: it must be an
// absolute, clean path (Envoy would resolve a relative one against its own working
// directory).
func CheckDir(dir string) error {
	switch {
	case dir == "":
		return fmt.Errorf("is required")
	case !path.IsAbs(dir):
		return fmt.Errorf("%q is not an absolute path; Envoy resolves a relative one against its own working directory", dir)
	case path.Clean(dir) != dir:
		return fmt.Errorf("%q is not a clean path; write %q", dir, path.Clean(dir))
	case strings.ContainsFunc(dir, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%q holds a control character", dir)
	}
	return nil
}

// Secrets are the SDS Secrets of the certificate folder tlsDir: its certificate and key
// (CertificateSecret) and its CA (ValidationSecret), each re-read by Envoy when tlsDir
// changes (a rotated Kubernetes Secret swaps the whole folder).
func Secrets(tlsDir string) (cert, validation *tlsv3.Secret) {
	file := func(name string) *corev3.DataSource {
		return &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: path.Join(tlsDir, name)}}
	}
	watch := &corev3.WatchedDirectory{Path: tlsDir}
	cert = &tlsv3.Secret{Name: CertificateSecret, Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: file(mtls.CertFile), PrivateKey: file(mtls.KeyFile), WatchedDirectory: watch,
	}}}
	validation = &tlsv3.Secret{Name: ValidationSecret, Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
		TrustedCa: file(mtls.CAFile), WatchedDirectory: watch,
	}}}
	return cert, validation
}

// SecretConfig is the SDS reference to the Secret name held by the file of that name in
// sdsDir, read again when sdsDir changes (a ConfigMap mount swaps the whole folder).
func SecretConfig(sdsDir, file, name string) *tlsv3.SdsSecretConfig {
	return &tlsv3.SdsSecretConfig{Name: name, SdsConfig: &corev3.ConfigSource{
		ResourceApiVersion: corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_PathConfigSource{PathConfigSource: &corev3.PathConfigSource{
			Path: path.Join(sdsDir, file), WatchedDirectory: &corev3.WatchedDirectory{Path: sdsDir},
		}},
	}}
}

// UpstreamTLS is the TLS context of a cluster whose server is role: TLS 1.3 only, ALPN
// h2 (gRPC servers require it), the client certificate and the CA from the SDS files in
// sdsDir, and a server certificate whose URI SAN names role (RoleSAN).
func UpstreamTLS(sdsDir, role string) *tlsv3.UpstreamTlsContext {
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
		},
		AlpnProtocols:                  []string{"h2"},
		TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{SecretConfig(sdsDir, CertificateFile, CertificateSecret)},
		ValidationContextType: &tlsv3.CommonTlsContext_CombinedValidationContext{CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
			DefaultValidationContext: &tlsv3.CertificateValidationContext{MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{{
				SanType: tlsv3.SubjectAltNameMatcher_URI,
				Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: RoleSAN(role)}}},
			}}},
			ValidationContextSdsSecretConfig: SecretConfig(sdsDir, ValidationFile, ValidationSecret),
		}},
	}}
}

// TransportSocket is UpstreamTLS as a cluster's transport socket; it passes ValidateAll,
// its typed config too.
func TransportSocket(sdsDir, role string) (*corev3.TransportSocket, error) {
	ctx := UpstreamTLS(sdsDir, role)
	if err := ctx.ValidateAll(); err != nil {
		return nil, err
	}
	a, err := anypb.New(ctx)
	if err != nil {
		return nil, err
	}
	ts := &corev3.TransportSocket{Name: wellknown.TransportSocketTls, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: a}}
	return ts, ts.ValidateAll()
}
