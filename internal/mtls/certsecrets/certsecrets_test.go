package certsecrets_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/internal/kubetest"
	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/internal/mtls/certsecrets"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

const day = 24 * time.Hour

var start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// setup makes a namespace and the Options of an installation in it, with a clock the
// test moves.
func setup(t *testing.T) (kubernetes.Interface, certsecrets.Options, *time.Time) {
	t.Helper()
	c, _ := env.Clients(t)
	ns := fmt.Sprintf("certs-%d", time.Now().UnixNano()%1e9)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := start
	return c, certsecrets.Options{
		Namespace: ns, TrustDomain: "cluster.local", Prefix: "gatehouse",
		Proxies: []string{"gateway-proxy"}, CALifetime: 900 * day, Lifetime: 90 * day,
		Labels: map[string]string{"app.kubernetes.io/instance": "gh"},
		Now:    func() time.Time { return now },
	}, &now
}

func sync(t *testing.T, c kubernetes.Interface, o certsecrets.Options) map[string]string {
	t.Helper()
	res, err := certsecrets.Sync(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res {
		got[r.Secret] = r.Action
	}
	return got
}

// versions are the resourceVersions of the namespace's Secrets: a write changes one.
func versions(t *testing.T, c kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	list, err := c.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		out[s.Name] = s.ResourceVersion
	}
	return out
}

func secret(t *testing.T, c kubernetes.Interface, ns, name string) *corev1.Secret {
	t.Helper()
	s, err := c.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var names = []string{"gatehouse-ca", "gatehouse-controlplane-tls", "gatehouse-extauth-tls", "gatehouse-proxy-gateway-proxy-tls"}

func all(action string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = action
	}
	return out
}

// TestSyncCreatesThenWritesNothing: the first run creates the CA and every component's
// Secret, each a certificate folder mtls loads with the right SPIFFE ID that chains to
// the CA Secret; the second run writes nothing.
func TestSyncCreatesThenWritesNothing(t *testing.T) {
	c, o, _ := setup(t)
	if diff := cmp.Diff(all(certsecrets.Created), sync(t, c, o)); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}
	ca := secret(t, c, o.Namespace, "gatehouse-ca")
	if ca.Type != corev1.SecretTypeOpaque || len(ca.Data[mtls.CAFile]) == 0 || len(ca.Data[certsecrets.CAKeyKey]) == 0 {
		t.Fatalf("CA Secret: type %s, keys %v", ca.Type, keys(ca.Data))
	}
	caCerts, err := mtls.ParseCertificates(ca.Data[mtls.CAFile])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(caCerts[0])
	wantIDs := map[string]string{
		"gatehouse-controlplane-tls":        "spiffe://cluster.local/ns/" + o.Namespace + "/role/controlplane",
		"gatehouse-extauth-tls":             "spiffe://cluster.local/ns/" + o.Namespace + "/role/extauth",
		"gatehouse-proxy-gateway-proxy-tls": "spiffe://cluster.local/ns/" + o.Namespace + "/role/proxy/gateway-proxy",
	}
	for name, id := range wantIDs {
		s := secret(t, c, o.Namespace, name)
		if s.Type != corev1.SecretTypeTLS || s.Labels["app.kubernetes.io/instance"] != "gh" {
			t.Errorf("%s: type %s, labels %v", name, s.Type, s.Labels)
		}
		dir := t.TempDir()
		for _, k := range []string{mtls.CertFile, mtls.KeyFile, mtls.CAFile} {
			if err := os.WriteFile(filepath.Join(dir, k), s.Data[k], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		f, err := mtls.Load(dir, zerolog.Nop())
		if err != nil {
			t.Fatalf("%s does not load as a certificate folder: %v", name, err)
		}
		if got := f.Self().ID; got != id {
			t.Errorf("%s names %s, want %s", name, got, id)
		}
		leaf, _ := mtls.ParseCertificates(s.Data[mtls.CertFile])
		if _, err := leaf[0].Verify(x509.VerifyOptions{Roots: roots, CurrentTime: start, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s does not verify against the CA Secret: %v", name, err)
		}
	}

	before := versions(t, c, o.Namespace)
	if diff := cmp.Diff(all(certsecrets.Kept), sync(t, c, o)); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, versions(t, c, o.Namespace)); diff != "" {
		t.Errorf("the second run wrote Secrets (-before +after):\n%s", diff)
	}
}

// TestSyncRenews: a certificate is renewed once two-thirds of its lifetime has passed,
// when it names another identity, and when the CA is renewed; the others are kept.
func TestSyncRenews(t *testing.T) {
	c, o, now := setup(t)
	sync(t, c, o)

	*now = start.Add(59 * day) // 90-day certificates, issued 5 minutes back-dated: due at 60 days less 3m20s
	if diff := cmp.Diff(all(certsecrets.Kept), sync(t, c, o)); diff != "" {
		t.Errorf("before two-thirds (-want +got):\n%s", diff)
	}
	*now = start.Add(60 * day)
	want := all(certsecrets.Renewed)
	want["gatehouse-ca"] = certsecrets.Kept
	if diff := cmp.Diff(want, sync(t, c, o)); diff != "" {
		t.Errorf("at two-thirds (-want +got):\n%s", diff)
	}

	// A Secret holding another component's certificate is issued again; only it.
	s := secret(t, c, o.Namespace, "gatehouse-extauth-tls")
	other := secret(t, c, o.Namespace, "gatehouse-controlplane-tls")
	s.Data = other.Data
	if _, err := c.CoreV1().Secrets(o.Namespace).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := certsecrets.Sync(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		wantAction := certsecrets.Kept
		if r.Secret == "gatehouse-extauth-tls" {
			wantAction = certsecrets.Renewed
			if !strings.Contains(r.Why, "/role/extauth") {
				t.Errorf("renewal of %s says %q, want the identity it should name", r.Secret, r.Why)
			}
		}
		if r.Action != wantAction {
			t.Errorf("%s: %s, want %s", r.Secret, r.Action, wantAction)
		}
	}

	// A new proxy gets its Secret; the others are kept.
	o.Proxies = append(o.Proxies, "public-gw")
	want = all(certsecrets.Kept)
	want["gatehouse-proxy-public-gw-tls"] = certsecrets.Created
	if diff := cmp.Diff(want, sync(t, c, o)); diff != "" {
		t.Errorf("a proxy added (-want +got):\n%s", diff)
	}

	// At two-thirds of the CA's lifetime the CA is renewed and every certificate with
	// it; each trusts the old CA too, so a peer not yet reloaded is still accepted.
	oldCA := secret(t, c, o.Namespace, "gatehouse-ca").Data[mtls.CAFile]
	*now = start.Add(600 * day)
	want = all(certsecrets.Renewed)
	want["gatehouse-proxy-public-gw-tls"] = certsecrets.Renewed
	if diff := cmp.Diff(want, sync(t, c, o)); diff != "" {
		t.Errorf("at two-thirds of the CA's lifetime (-want +got):\n%s", diff)
	}
	ca := secret(t, c, o.Namespace, "gatehouse-ca")
	if string(ca.Data[certsecrets.PreviousCAKey]) != string(oldCA) {
		t.Errorf("the CA Secret does not keep the previous CA")
	}
	bundle := string(secret(t, c, o.Namespace, "gatehouse-extauth-tls").Data[mtls.CAFile])
	if !strings.Contains(bundle, string(ca.Data[mtls.CAFile])) || !strings.Contains(bundle, string(oldCA)) {
		t.Errorf("ca.crt of a component after the CA's renewal does not hold both CAs")
	}
	before := versions(t, c, o.Namespace)
	sync(t, c, o)
	if diff := cmp.Diff(before, versions(t, c, o.Namespace)); diff != "" {
		t.Errorf("the run after the CA's renewal wrote Secrets (-before +after):\n%s", diff)
	}
}

// TestSyncRefusesForeignSecrets: a Secret of a Secret's name that this command did not
// make is never overwritten.
func TestSyncRefusesForeignSecrets(t *testing.T) {
	tests := []struct {
		name   string
		secret *corev1.Secret
		opts   func(*certsecrets.Options)
		want   string
	}{
		{
			name:   "CA Secret of another type",
			secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gatehouse-ca"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}},
			want:   "is of type kubernetes.io/tls, not a CA Secret this command made",
		},
		{
			name:   "component Secret of another type",
			secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gatehouse-extauth-tls"}, Type: corev1.SecretTypeOpaque},
			want:   "gatehouse-extauth-tls is of type Opaque, not kubernetes.io/tls",
		},
		{
			name: "CA of another trust domain",
			opts: func(o *certsecrets.Options) { o.TrustDomain = "example.org" },
			want: `is the CA of another trust domain than "example.org"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, o, _ := setup(t)
			if tt.secret != nil {
				if _, err := c.CoreV1().Secrets(o.Namespace).Create(context.Background(), tt.secret, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			} else {
				sync(t, c, o)
			}
			if tt.opts != nil {
				tt.opts(&o)
			}
			before := versions(t, c, o.Namespace)
			_, err := certsecrets.Sync(context.Background(), c, o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one containing %q", err, tt.want)
			}
			after := versions(t, c, o.Namespace)
			for name, v := range before {
				if after[name] != v {
					t.Errorf("Secret %s was written", name)
				}
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
