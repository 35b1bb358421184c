package translate

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// TLS Secret data keys (kubernetes.io/tls).
const (
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

// TLSCert is a TLS Secret that can serve: a certificate chain and its private key. The
// key and chain never appear in the model's JSON (the admin endpoints show the model).
type TLSCert struct {
	// Name is the Secret's id, "<namespace>.<name>", which is also the SDS Secret's name.
	Name     string    `json:"name"`
	Hash     string    `json:"-"`
	NotAfter time.Time `json:"notAfter"`
	Chain    []byte    `json:"-"`
	Key      []byte    `json:"-"`
}

// TLSCertOf checks a TLS Secret: its certificate chain and key parse as PEM and belong
// together (else an error: it cannot serve). A certificate that expired or is not valid
// yet serves, with a warning: clients will refuse it until it is replaced. Errors and
// warnings never quote the key.
func TLSCertOf(s *apiv1.Secret, hash string, now time.Time) (*TLSCert, []string, error) {
	var errs fieldErrors
	chain, okC := s.Value(TLSCertKey)
	key, okK := s.Value(TLSKeyKey)
	if !okC || len(chain) == 0 {
		errs.add("data."+TLSCertKey, "is required: the PEM certificate chain")
	}
	if !okK || len(key) == 0 {
		errs.add("data."+TLSKeyKey, "is required: the PEM private key")
	}
	if len(errs) > 0 {
		return nil, nil, errs.err("secret " + s.Metadata.ID())
	}
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		errs.addf("data", "not a usable certificate and key: %v", err)
		return nil, nil, errs.err("secret " + s.Metadata.ID())
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		errs.addf("data."+TLSCertKey, "the certificate does not parse: %v", err)
		return nil, nil, errs.err("secret " + s.Metadata.ID())
	}
	var warnings []string
	switch {
	case now.After(leaf.NotAfter):
		warnings = append(warnings, fmt.Sprintf("data.%s: the certificate expired at %s; clients will refuse it", TLSCertKey, leaf.NotAfter.UTC().Format(time.RFC3339)))
	case now.Before(leaf.NotBefore):
		warnings = append(warnings, fmt.Sprintf("data.%s: the certificate is not valid before %s; clients will refuse it until then", TLSCertKey, leaf.NotBefore.UTC().Format(time.RFC3339)))
	}
	return &TLSCert{Name: s.Metadata.ID(), Hash: hash, NotAfter: leaf.NotAfter, Chain: chain, Key: key}, warnings, nil
}
