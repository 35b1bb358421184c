package certsecrets

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// syncCA reads, makes or rotates the CA Secret: it is rotated once two-thirds of its
// lifetime has passed, and the CA it replaces stays trusted (PreviousCAKey) until it
// expires. It returns the CA and the CAs to trust.
func syncCA(ctx context.Context, secrets secretClient, o Options) (*mtls.CA, []*x509.Certificate, Result, error) {
	name := CASecret(o.Prefix)
	now := o.Now()
	old, err := get(ctx, secrets, o.Namespace, name)
	if err != nil {
		return nil, nil, Result{}, err
	}
	res := Result{Secret: name, Action: Created}
	var prev *x509.Certificate
	if old != nil {
		ca, err := parseCASecret(old, o)
		if err != nil {
			return nil, nil, Result{}, err
		}
		if p, err := mtls.ParseCertificates(old.Data[PreviousCAKey]); err == nil && now.Before(p[0].NotAfter) {
			prev = p[0]
		}
		if !due(ca.Cert.NotBefore, ca.Cert.NotAfter, now) {
			return ca, trustedOf(ca, prev), Result{Secret: name, Action: Kept, NotAfter: ca.Cert.NotAfter}, nil
		}
		res = Result{Secret: name, Action: Renewed, Why: "two-thirds of its lifetime passed"}
		prev = ca.Cert
	}
	ca, err := mtls.NewCA(o.TrustDomain, now, o.CALifetime)
	if err != nil {
		return nil, nil, Result{}, err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, nil, Result{}, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{mtls.CAFile: ca.CertPEM(), CAKeyKey: key},
	}
	if prev != nil {
		s.Data[PreviousCAKey] = pemOf(prev)
	}
	if err := write(ctx, secrets, o, old, s); err != nil {
		return nil, nil, Result{}, err
	}
	res.NotAfter = ca.Cert.NotAfter
	return ca, trustedOf(ca, prev), res, nil
}

// parseCASecret reads the CA of a CA Secret, which must be of o's trust domain.
func parseCASecret(s *corev1.Secret, o Options) (*mtls.CA, error) {
	where := fmt.Sprintf("certsecrets: Secret %s/%s", s.Namespace, s.Name)
	if s.Type != corev1.SecretTypeOpaque {
		return nil, fmt.Errorf("%s is of type %s, not a CA Secret this command made (Opaque, %s and %s); delete it or use another --prefix", where, s.Type, mtls.CAFile, CAKeyKey)
	}
	ca, err := mtls.ParseCA(s.Data[mtls.CAFile], s.Data[CAKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w; delete it to make a new CA", where, err)
	}
	if u := ca.Cert.URIs; len(u) != 1 || u[0].Host != o.TrustDomain {
		return nil, fmt.Errorf("%s is the CA of another trust domain than %q; delete it or use another --prefix", where, o.TrustDomain)
	}
	return ca, nil
}

func trustedOf(ca *mtls.CA, prev *x509.Certificate) []*x509.Certificate {
	if prev == nil {
		return []*x509.Certificate{ca.Cert}
	}
	return []*x509.Certificate{ca.Cert, prev}
}

// bundle is the PEM of certs, in order.
func bundle(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		b.Write(pemOf(c))
	}
	return b.Bytes()
}
