// Package mtls is mutual TLS between Gatehouse's components: identities that name a
// role (SPIFFE IDs in a certificate's URI SAN), certificate folders that are re-read
// when they change, and the TLS configurations of the servers and clients built on them.
package mtls

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Roles a certificate can name besides a gateway proxy's.
const (
	// RoleControlplane is the control plane's own certificate; clients accept no other.
	RoleControlplane = "controlplane"
	// RoleExtauth is every extauth server.
	RoleExtauth = "extauth"
)

// Identity is who a certificate says its holder is. Its SPIFFE ID is
// spiffe://<TrustDomain>/ns/<Namespace>/role/<Role> for the control plane and extauth,
// and spiffe://<TrustDomain>/ns/<ns>/role/proxy/<name> for the gateway proxy role
// "<ns>~<name>" (SPIFFE IDs cannot hold "~").
type Identity struct {
	TrustDomain string `json:"trustDomain"`
	Namespace   string `json:"namespace"`
	Role        string `json:"role"`
}

// ProxyRole is the role of the gateway proxy name in namespace ns.
func ProxyRole(ns, name string) string { return ns + "~" + name }

// ID is the SPIFFE ID of i.
func (i Identity) ID() (spiffeid.ID, error) {
	td, err := spiffeid.TrustDomainFromString(i.TrustDomain)
	if err != nil {
		return spiffeid.ID{}, fmt.Errorf("mtls: trust domain %q: %w", i.TrustDomain, err)
	}
	segments := []string{"ns", i.Namespace, "role"}
	switch {
	case i.Role == RoleControlplane || i.Role == RoleExtauth:
		segments = append(segments, i.Role)
	case IsProxyRole(i.Role):
		ns, name, _ := strings.Cut(i.Role, "~")
		if ns != i.Namespace {
			return spiffeid.ID{}, fmt.Errorf("mtls: proxy role %q is not in namespace %q", i.Role, i.Namespace)
		}
		segments = append(segments, "proxy", name)
	default:
		return spiffeid.ID{}, fmt.Errorf("mtls: role %q is none of %q, %q or <namespace>~<proxy>", i.Role, RoleControlplane, RoleExtauth)
	}
	id, err := spiffeid.FromSegments(td, segments...)
	if err != nil {
		return spiffeid.ID{}, fmt.Errorf("mtls: %s: %w", i, err)
	}
	return id, nil
}

// String is the SPIFFE ID of i, or a description of it when it makes none.
func (i Identity) String() string {
	if id, err := i.ID(); err == nil {
		return id.String()
	}
	return fmt.Sprintf("trust domain %q, namespace %q, role %q", i.TrustDomain, i.Namespace, i.Role)
}

// IsProxyRole says whether role is a gateway proxy's, "<namespace>~<proxy>".
func IsProxyRole(role string) bool {
	ns, name, ok := strings.Cut(role, "~")
	return ok && ns != "" && name != "" && !strings.Contains(name, "~")
}

// Parse reads the identity a SPIFFE ID names.
func Parse(id spiffeid.ID) (Identity, error) {
	segs := strings.Split(strings.TrimPrefix(id.Path(), "/"), "/")
	i := Identity{TrustDomain: id.TrustDomain().Name()}
	if len(segs) >= 4 && segs[0] == "ns" && segs[2] == "role" {
		i.Namespace = segs[1]
		switch {
		case len(segs) == 4 && (segs[3] == RoleControlplane || segs[3] == RoleExtauth):
			i.Role = segs[3]
			return i, nil
		case len(segs) == 5 && segs[3] == "proxy":
			i.Role = ProxyRole(segs[1], segs[4])
			return i, nil
		}
	}
	return Identity{}, fmt.Errorf("mtls: %s names no role: want spiffe://<trust domain>/ns/<namespace>/role/{controlplane|extauth|proxy/<name>}", id)
}

// Peer is what the other end of a connection presented.
type Peer struct {
	// ID is the certificate's SPIFFE ID ("" when it has none).
	ID string `json:"id"`
	// Identity is what ID names; its Role is "" when ID names none.
	Identity Identity `json:"identity"`
	// Subject is the certificate's subject.
	Subject  string    `json:"subject"`
	NotAfter time.Time `json:"notAfter"`
}

// FromCert reads the peer a verified leaf certificate names. The error says why it
// names no role; the Peer still carries what the certificate holds.
func FromCert(cert *x509.Certificate) (Peer, error) {
	p := Peer{Subject: cert.Subject.String(), NotAfter: cert.NotAfter}
	id, err := x509svid.IDFromCert(cert)
	if err != nil {
		return p, fmt.Errorf("mtls: certificate %q: %w", p.Subject, err)
	}
	p.ID = id.String()
	p.Identity, err = Parse(id)
	return p, err
}

// ErrNoCertificate is returned by PeerFromContext when the connection is not TLS or
// the client presented no certificate.
var ErrNoCertificate = errors.New("mtls: the connection carries no client certificate")

// PeerFromContext is the peer of a gRPC call, from the certificate its TLS connection
// presented (verified by the server's handshake).
func PeerFromContext(ctx context.Context) (Peer, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Peer{}, ErrNoCertificate
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		return Peer{}, ErrNoCertificate
	}
	return FromCert(info.State.PeerCertificates[0])
}
