package routeopts_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// selfSigned returns a certificate for name and its PEM chain and key.
func selfSigned(t *testing.T, name string) (*x509.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kd, _ := x509.MarshalECPrivateKey(key)
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

func tlsSecretYAML(name string, chain, key []byte) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: gatehouse-system}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n",
		name, base64.StdEncoding.EncodeToString(chain), base64.StdEncoding.EncodeToString(key))
}

// TestDevHTTPSRotation: gatehouse dev serves two VirtualServices with sslConfig on two
// server names over HTTPS, each with its certificate; a certificate rewritten on disk
// is what the next handshakes get, without a restart.
func TestDevHTTPSRotation(t *testing.T) {
	dir := t.TempDir()
	echo, gw, https, ex := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	var vs strings.Builder
	vs.WriteString(testbin.Upstream("echo", echo))
	leaf := map[string]*x509.Certificate{}
	for _, n := range []string{"app", "other"} {
		fmt.Fprintf(&vs, "---\napiVersion: gateway.gatehouse.dev/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: gatehouse-system}\nspec:\n  sslConfig: {secretRef: {name: %s-tls}}\n  virtualHost:\n    domains: [%s.example]\n    routes: [{routeAction: {single: {upstream: {name: echo}}}}]\n", n, n, n)
		c, chain, key := selfSigned(t, n+".example")
		leaf[n] = c
		testbin.WriteFile(t, filepath.Join(dir, n+"-tls.yaml"), tlsSecretYAML(n+"-tls", chain, key))
	}
	testbin.WriteFile(t, filepath.Join(dir, "resources.yaml"), vs.String())
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "dev", "--resources", dir, "--plugin-dir", dir,
		"--listen", gw, "--https-listen", https, "--extauth-listen", ex, "--echo-listen", echo)
	testbin.WaitTCP(t, p, https, settle)

	served := func(sni string) (*x509.Certificate, error) {
		conn, err := tls.Dial("tcp", https, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0], nil
	}
	for _, n := range []string{"app", "other"} {
		testbin.Eventually(t, settle, func() error {
			c, err := served(n + ".example")
			if err != nil {
				return err
			}
			if !c.Equal(leaf[n]) {
				return fmt.Errorf("%s.example: served %v", n, c.DNSNames)
			}
			return nil
		})
	}
	rotated, chain, key := selfSigned(t, "app.example")
	testbin.WriteFile(t, filepath.Join(dir, "app-tls.yaml"), tlsSecretYAML("app-tls", chain, key))
	testbin.Eventually(t, settle, func() error {
		c, err := served("app.example")
		if err != nil {
			return err
		}
		if !c.Equal(rotated) {
			return fmt.Errorf("app.example: still the old certificate")
		}
		return nil
	})
	if c, err := served("other.example"); err != nil || !c.Equal(leaf["other"]) {
		t.Errorf("other.example after the rotation of app's certificate: %v", err)
	}
}
