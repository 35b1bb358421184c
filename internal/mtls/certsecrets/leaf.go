package certsecrets

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// syncLeaf keeps the Secret of one component: issued by ca for its identity and hosts,
// trusting the CAs trusted, and not yet two-thirds through its lifetime.
func syncLeaf(ctx context.Context, secrets secretClient, o Options, comp mtls.Component, ca *mtls.CA, trusted []*x509.Certificate) (Result, error) {
	name := TLSSecret(o.Prefix, comp.Name)
	now := o.Now()
	old, err := get(ctx, secrets, o.Namespace, name)
	if err != nil {
		return Result{}, err
	}
	res := Result{Secret: name, Action: Created}
	if old != nil {
		if old.Type != corev1.SecretTypeTLS {
			return Result{}, fmt.Errorf("certsecrets: Secret %s/%s is of type %s, not %s; delete it or use another --prefix", o.Namespace, name, old.Type, corev1.SecretTypeTLS)
		}
		why, notAfter := renewal(old, comp, ca, trusted, o)
		if why == "" {
			return Result{Secret: name, Action: Kept, NotAfter: notAfter}, nil
		}
		res = Result{Secret: name, Action: Renewed, Why: why}
	}
	leaf, err := ca.Issue(comp.Identity, comp.Hosts, now, o.Lifetime)
	if err != nil {
		return Result{}, fmt.Errorf("certsecrets: %s: %w", name, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{mtls.CertFile: leaf.CertPEM, mtls.KeyFile: leaf.KeyPEM, mtls.CAFile: bundle(trusted)},
	}
	if err := write(ctx, secrets, o, old, s); err != nil {
		return Result{}, err
	}
	res.NotAfter = leaf.NotAfter
	return res, nil
}

// renewal says why the certificate of s must be issued again, "" when it need not be,
// and when the certificate s holds ends.
func renewal(s *corev1.Secret, comp mtls.Component, ca *mtls.CA, trusted []*x509.Certificate, o Options) (string, time.Time) {
	certs, err := mtls.ParseCertificates(s.Data[mtls.CertFile])
	if err != nil {
		return "its certificate does not read", time.Time{}
	}
	cert := certs[0]
	if _, err := tls.X509KeyPair(s.Data[mtls.CertFile], s.Data[mtls.KeyFile]); err != nil {
		return "its key is not the certificate's", cert.NotAfter
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: o.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return "it was not issued by the current CA, or has expired", cert.NotAfter
	}
	if !bytes.Equal(s.Data[mtls.CAFile], bundle(trusted)) {
		return "the CAs to trust changed", cert.NotAfter
	}
	id, _ := comp.Identity.ID()
	if len(cert.URIs) != 1 || cert.URIs[0].String() != id.String() {
		return "it names another identity than " + id.String(), cert.NotAfter
	}
	if !slices.Equal(hostsOf(cert), comp.Hosts) {
		return "its host names differ", cert.NotAfter
	}
	if due(cert.NotBefore, cert.NotAfter, o.Now()) {
		return "two-thirds of its lifetime passed", cert.NotAfter
	}
	return "", cert.NotAfter
}

// hostsOf is the DNS names and then the IP addresses a certificate names, the order
// Issue writes them in for mtls.Components' hosts.
func hostsOf(c *x509.Certificate) []string {
	out := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func pemOf(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}
