package mtls

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The CA's folder under Generate's output, and its files.
const (
	CADir          = "ca"
	CAKeyFile      = "ca.key"
	PreviousCAFile = "previous.crt"
)

// GenerateOptions say what Generate writes.
type GenerateOptions struct {
	// Out is the output folder: Out/ca holds the CA, Out/<component> each certificate
	// folder (Components).
	Out                    string
	TrustDomain, Namespace string
	Proxies                []string
	CALifetime, Lifetime   time.Duration
	// RotateCA makes a new CA even when Out/ca holds one; the old one stays trusted
	// (in every ca.crt) until RetirePreviousCA.
	RotateCA, RetirePreviousCA bool
	Now                        time.Time
}

// Generated is one certificate folder written.
type Generated struct {
	Component
	Dir      string
	NotAfter time.Time
}

// Generate writes the CA (kept when Out/ca holds one) and a certificate folder for every
// component of the installation, each trusting the CA (and the previous one, after a
// rotation, until it is retired).
func Generate(o GenerateOptions) ([]Generated, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.CALifetime <= 0 || o.Lifetime <= 0 {
		return nil, errors.New("mtls: lifetimes must be positive")
	}
	comps, err := Components(o.TrustDomain, o.Namespace, o.Proxies)
	if err != nil {
		return nil, err
	}
	ca, trusted, err := caOf(o)
	if err != nil {
		return nil, err
	}
	var out []Generated
	for _, c := range comps {
		leaf, err := ca.Issue(c.Identity, c.Hosts, o.Now, o.Lifetime)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(o.Out, c.Name)
		if err := WriteFolder(dir, leaf, trusted...); err != nil {
			return nil, err
		}
		out = append(out, Generated{Component: c, Dir: dir, NotAfter: leaf.NotAfter})
	}
	return out, nil
}

// caOf is the CA of o.Out (made, kept or rotated) and the CAs to trust.
func caOf(o GenerateOptions) (*CA, []*x509.Certificate, error) {
	dir := filepath.Join(o.Out, CADir)
	certPath, keyPath, prevPath := filepath.Join(dir, CAFile), filepath.Join(dir, CAKeyFile), filepath.Join(dir, PreviousCAFile)
	var ca *CA
	certPEM, err := os.ReadFile(certPath)
	switch {
	case err == nil:
		keyPEM, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, nil, fmt.Errorf("mtls: %w", err)
		}
		if ca, err = ParseCA(certPEM, keyPEM); err != nil {
			return nil, nil, fmt.Errorf("mtls: %s: %w", dir, err)
		}
		if got := ca.Cert.URIs; len(got) != 1 || got[0].Host != o.TrustDomain {
			return nil, nil, fmt.Errorf("mtls: %s is the CA of another trust domain than %q; use another --out", dir, o.TrustDomain)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, nil, fmt.Errorf("mtls: %w", err)
	}
	if o.RetirePreviousCA {
		if err := os.Remove(prevPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("mtls: %w", err)
		}
	}
	if ca == nil || o.RotateCA {
		if ca != nil {
			if err := writeAside(prevPath, ca.CertPEM(), 0o644); err != nil {
				return nil, nil, err
			}
		}
		if ca, err = NewCA(o.TrustDomain, o.Now, o.CALifetime); err != nil {
			return nil, nil, err
		}
		key, err := ca.KeyPEM()
		if err != nil {
			return nil, nil, err
		}
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, nil, fmt.Errorf("mtls: %w", err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("mtls: %w", err)
		}
		if err := writeAside(keyPath, key, 0o600); err != nil {
			return nil, nil, err
		}
		if err := writeAside(certPath, ca.CertPEM(), 0o644); err != nil {
			return nil, nil, err
		}
	}
	trusted := []*x509.Certificate{ca.Cert}
	if prev, err := os.ReadFile(prevPath); err == nil {
		certs, err := ParseCertificates(prev)
		if err != nil {
			return nil, nil, fmt.Errorf("mtls: %s: %w", prevPath, err)
		}
		for _, c := range certs {
			if o.Now.Before(c.NotAfter) {
				trusted = append(trusted, c)
			}
		}
	}
	return ca, trusted, nil
}
