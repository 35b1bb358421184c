// Package certsecrets keeps the certificates of an installation in Kubernetes Secrets:
// a CA Secret and one kubernetes.io/tls Secret per component (mtls.Components), issued
// from that CA, renewed once two-thirds of their lifetime has passed. A run that finds
// nothing to renew writes nothing.
package certsecrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// Data keys of the CA Secret besides mtls.CAFile.
const (
	CAKeyKey      = mtls.CAKeyFile
	PreviousCAKey = mtls.PreviousCAFile
)

// Options say which Secrets Sync keeps, and where.
type Options struct {
	Namespace, TrustDomain string
	// Prefix names the Secrets: <Prefix>-ca and <Prefix>-<component>-tls.
	Prefix string
	// Proxies are the gateway proxies (names in Namespace, or <namespace>~<name> roles).
	Proxies              []string
	CALifetime, Lifetime time.Duration
	// Labels are put on every Secret written.
	Labels map[string]string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Result is what Sync did with one Secret.
type Result struct {
	Secret string
	// Action is Created, Renewed or Kept.
	Action string
	// Why is the reason for a renewal ("" otherwise).
	Why      string
	NotAfter time.Time
}

// Actions of a Result.
const (
	Created = "created"
	Renewed = "renewed"
	Kept    = "kept"
)

// CASecret is the name of the CA Secret for prefix.
func CASecret(prefix string) string { return prefix + "-ca" }

// TLSSecret is the name of a component's Secret for prefix.
func TLSSecret(prefix, component string) string { return prefix + "-" + component + "-tls" }

// Sync creates or renews the CA Secret and every component's Secret in o.Namespace.
// A Secret is renewed when two-thirds of its certificate's lifetime has passed, when
// it names another identity or other hosts than wanted, or when it was not issued by
// the current CA or does not trust exactly the CAs wanted; otherwise it is left alone.
func Sync(ctx context.Context, c kubernetes.Interface, o Options) ([]Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Prefix == "" {
		return nil, errors.New("certsecrets: a prefix is required")
	}
	if o.CALifetime <= 0 || o.Lifetime <= 0 {
		return nil, errors.New("certsecrets: lifetimes must be positive")
	}
	comps, err := mtls.Components(o.TrustDomain, o.Namespace, o.Proxies)
	if err != nil {
		return nil, fmt.Errorf("certsecrets: %w", err)
	}
	secrets := c.CoreV1().Secrets(o.Namespace)
	ca, trusted, res, err := syncCA(ctx, secrets, o)
	if err != nil {
		return nil, err
	}
	out := []Result{res}
	for _, comp := range comps {
		r, err := syncLeaf(ctx, secrets, o, comp, ca, trusted)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// secretClient is the part of the Secrets client Sync uses.
type secretClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
	Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// write creates s when old is nil, else replaces old's data with s's, keeping old's
// labels and annotations; o.Labels are set on it either way.
func write(ctx context.Context, secrets secretClient, o Options, old, s *corev1.Secret) error {
	s.Namespace = o.Namespace
	s.Labels = map[string]string{}
	if old != nil {
		for k, v := range old.Labels {
			s.Labels[k] = v
		}
	}
	for k, v := range o.Labels {
		s.Labels[k] = v
	}
	var err error
	if old == nil {
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	} else {
		s.ResourceVersion = old.ResourceVersion
		s.Annotations = old.Annotations
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("certsecrets: writing Secret %s/%s: %w", o.Namespace, s.Name, err)
	}
	return nil
}

// get reads a Secret; nil when there is none.
func get(ctx context.Context, secrets secretClient, ns, name string) (*corev1.Secret, error) {
	s, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("certsecrets: reading Secret %s/%s: %w", ns, name, err)
	}
	return s, nil
}

// due says whether a certificate valid from notBefore to notAfter is two-thirds through
// its lifetime at now.
func due(notBefore, notAfter, now time.Time) bool {
	return !now.Before(notBefore.Add(notAfter.Sub(notBefore) * 2 / 3))
}
