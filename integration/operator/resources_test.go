package operator_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
)

// Secret values of the test resources; none may appear in any output.
const (
	clientSecret = "oidc-client-secret-4711"
	stringSecret = "string-data-secret-0815"
)

// certPair returns a self-signed certificate for tls.example and its key, PEM encoded.
func certPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tls.example"},
		DNSNames: []string{"tls.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// secretValues are the forms a secret could leak in: itself, base64, and each line of
// a PEM body.
func secretValues(values ...string) []string {
	var out []string
	for _, v := range values {
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
		for _, line := range strings.Split(v, "\n") {
			if len(line) > 20 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

const upstreamsYAML = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8083}]}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8090}, {addr: 127.0.0.2, port: 8090}]}}
`

const pluginAuthYAML = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: plugin-auth, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha, beta]}
`

const oidcYAML = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: oidc, namespace: gatehouse-system}
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: https://app.example.com
          callbackPath: /callback
          clientId: app
          clientSecretRef: {name: oauth, namespace: gatehouse-system}
          issuerUrl: https://idp.example.com
`

// virtualServiceYAML routes /public (open) and / (secured by plugin-auth) to upstream.
func virtualServiceYAML(name, domain, upstream string) string {
	return fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: %s, namespace: gatehouse-system}
spec:
  virtualHost:
    domains: [%q]
    routes:
      - matchers: [{prefix: /public}]
        routeAction: {single: {upstream: {name: %s, namespace: gatehouse-system}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: %s, namespace: gatehouse-system}}}
        options:
          extauth: {configRef: {name: plugin-auth, namespace: gatehouse-system}}
`, name, domain, upstream, upstream)
}

// secretsYAML are an OAuth Secret, a TLS Secret and a Secret with stringData, and the
// secret values they hold in every form they could leak in.
func secretsYAML(t *testing.T) (string, []string) {
	t.Helper()
	cert, key := certPair(t)
	b64 := base64.StdEncoding.EncodeToString
	y := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: gatehouse-system}
type: extauth.gatehouse.dev/oauth
data: {client-secret: %s}
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: gatehouse-system}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
---
apiVersion: v1
kind: Secret
metadata: {name: plain, namespace: gatehouse-system}
type: Opaque
stringData: {token: %s}
`, b64([]byte(clientSecret)), b64(cert), b64(key), stringSecret)
	return y, secretValues(clientSecret, stringSecret, string(key))
}

// healthyDir writes a resource set with no problem: upstreams, the plugin and OIDC
// AuthConfigs, the Secrets and one VirtualService. It returns the folder and the secret
// values.
func healthyDir(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	secrets, values := secretsYAML(t)
	writeFile(t, dir, "upstreams.yaml", upstreamsYAML)
	writeFile(t, dir, "auth_configs.yaml", pluginAuthYAML+"---\n"+oidcYAML)
	writeFile(t, dir, "secrets.yaml", secrets)
	writeFile(t, dir, "virtual_services.yaml", virtualServiceYAML("default", "*", "echo"))
	return dir, values
}
