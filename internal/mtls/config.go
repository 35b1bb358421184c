package mtls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/spiffetls/tlsconfig"
	"google.golang.org/grpc/credentials"
)

// Authorize decides whether a peer whose certificate chains to the folder's CA may
// connect; Peer's Identity has no Role when its certificate names none.
type Authorize func(p Peer) error

// AnyMember admits every certificate of the folder's trust domain, whether or not it
// names a role (the control plane refuses those itself, after logging them).
func AnyMember(Peer) error { return nil }

// OnlyRoles admits the peers whose certificate names one of the roles; "proxy" stands
// for every gateway proxy role.
func OnlyRoles(roles ...string) Authorize {
	return func(p Peer) error {
		for _, r := range roles {
			if p.Identity.Role == r || (r == "proxy" && IsProxyRole(p.Identity.Role)) {
				return nil
			}
		}
		return fmt.Errorf("mtls: %s (%s) is not one of the roles %v", p.ID, p.Subject, roles)
	}
}

// ServerConfig is a server's TLS configuration: TLS 1.3 only, f's certificate, and a
// client certificate required that chains to f's CA, is in f's trust domain and that
// allow admits. Every handshake uses the folder's files as they are then.
func ServerConfig(f *Folder, allow Authorize) *tls.Config {
	cfg := tlsconfig.MTLSServerConfig(f, f, f.authorizer(allow))
	cfg.MinVersion = tls.VersionTLS13
	return cfg
}

// ClientConfig is a client's TLS configuration: TLS 1.3 only, f's certificate, and a
// server certificate required that chains to f's CA, is in f's trust domain and names
// the role server (RoleControlplane or RoleExtauth). Host names are not checked: the
// role in the certificate is what identifies the server.
func ClientConfig(f *Folder, server string) *tls.Config {
	cfg := tlsconfig.MTLSClientConfig(f, f, f.authorizer(OnlyRoles(server)))
	cfg.MinVersion = tls.VersionTLS13
	return cfg
}

// ServerCredentials are gRPC server credentials of ServerConfig.
func ServerCredentials(f *Folder, allow Authorize) credentials.TransportCredentials {
	return credentials.NewTLS(ServerConfig(f, allow))
}

// ClientCredentials are gRPC client credentials of ClientConfig.
func ClientCredentials(f *Folder, server string) credentials.TransportCredentials {
	return credentials.NewTLS(ClientConfig(f, server))
}

// authorizer admits the peers of f's trust domain that allow admits.
func (f *Folder) authorizer(allow Authorize) tlsconfig.Authorizer {
	return func(id spiffeid.ID, chains [][]*x509.Certificate) error {
		own := f.Self().Identity.TrustDomain
		if id.TrustDomain().Name() != own {
			return fmt.Errorf("mtls: %s is not in the trust domain %q", id, own)
		}
		if len(chains) == 0 || len(chains[0]) == 0 {
			return fmt.Errorf("mtls: %s: no verified chain", id)
		}
		p, _ := FromCert(chains[0][0])
		return allow(p)
	}
}
