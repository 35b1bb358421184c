package mtls

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Default lifetimes of the certificates Generate issues.
const (
	DefaultCALifetime   = 5 * 365 * 24 * time.Hour
	DefaultCertLifetime = 90 * 24 * time.Hour
)

// CA issues the certificates of one trust domain (ECDSA P-256).
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed CA for trustDomain, valid from now for lifetime.
func NewCA(trustDomain string, now time.Time, lifetime time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mtls: ca key: %w", err)
	}
	td, err := (Identity{TrustDomain: trustDomain, Namespace: "x", Role: RoleExtauth}).ID()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"gatehouse"}, CommonName: "gatehouse CA " + td.TrustDomain().Name()},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(lifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		URIs:                  []*url.URL{td.TrustDomain().ID().URL()},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("mtls: ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// ParseCA reads a CA from the PEM of its certificate and key.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("mtls: ca: want a PEM certificate and a PEM key")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("mtls: ca certificate: %w", err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("mtls: ca key: %w", err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("mtls: ca key: want an ECDSA key")
	}
	if !cert.IsCA || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.New("mtls: ca: the certificate is not a CA, or not the key's")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// CertPEM is the CA's certificate in PEM.
func (ca *CA) CertPEM() []byte { return pemOf("CERTIFICATE", ca.Cert.Raw) }

// KeyPEM is the CA's key in PEM.
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.Key) }

// Leaf is an issued certificate and its key, in PEM.
type Leaf struct {
	CertPEM, KeyPEM []byte
	NotAfter        time.Time
}

// Issue makes the certificate of id (its SPIFFE ID its only URI SAN), valid from now for
// lifetime and never past the CA's end, with hosts (DNS names or IP addresses) as
// further SANs.
func (ca *CA) Issue(id Identity, hosts []string, now time.Time, lifetime time.Duration) (Leaf, error) {
	sid, err := id.ID()
	if err != nil {
		return Leaf{}, err
	}
	if got := ca.Cert.URIs; len(got) == 1 && got[0].Host != id.TrustDomain {
		return Leaf{}, fmt.Errorf("mtls: the CA is for trust domain %q, not %q", got[0].Host, id.TrustDomain)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Leaf{}, fmt.Errorf("mtls: key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"gatehouse"}, OrganizationalUnit: []string{id.Namespace}, CommonName: id.Role},
		NotBefore:    now.Add(-5 * time.Minute),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{sid.URL()},
	}
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return Leaf{}, fmt.Errorf("mtls: %s: %w", id, err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return Leaf{}, err
	}
	return Leaf{CertPEM: pemOf("CERTIFICATE", der), KeyPEM: kp, NotAfter: tmpl.NotAfter}, nil
}

// WriteFolder writes a certificate folder: leaf as CertFile and KeyFile (mode 0600) and
// the CAs trusted as CAFile. Each file is written aside and renamed into place, so a
// process reading the folder sees a whole file, old or new.
func WriteFolder(dir string, leaf Leaf, trusted ...*x509.Certificate) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mtls: %w", err)
	}
	var cas bytes.Buffer
	for _, c := range trusted {
		cas.Write(pemOf("CERTIFICATE", c.Raw))
	}
	for _, file := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CAFile, cas.Bytes(), 0o644}, {KeyFile, leaf.KeyPEM, 0o600}, {CertFile, leaf.CertPEM, 0o644}} {
		if err := writeAside(filepath.Join(dir, file.name), file.data, file.mode); err != nil {
			return err
		}
	}
	return nil
}

func writeAside(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("mtls: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("mtls: %w", err)
	}
	return nil
}

// ParseCertificates reads every certificate of a PEM bundle.
func ParseCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("mtls: %w", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("mtls: no PEM certificate")
	}
	return out, nil
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("mtls: key: %w", err)
	}
	return pemOf("PRIVATE KEY", der), nil
}

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
