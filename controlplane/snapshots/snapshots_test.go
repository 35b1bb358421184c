package snapshots_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Secret values of the test resources; none may appear in any output.
const (
	clientSecret = "oidc-client-secret-4711"
	stringSecret = "string-data-secret-0815"
)

// certPair returns a self-signed certificate and its private key, PEM encoded.
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

// secretResources are an OAuth Secret, a TLS Secret, a Secret with stringData, an OIDC
// AuthConfig using the first and a VirtualService with sslConfig using the second.
func secretResources(t *testing.T) (yaml string, secrets []string) {
	t.Helper()
	cert, key := certPair(t)
	b64 := base64.StdEncoding.EncodeToString
	yaml = fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8083}]}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8090}]}}
---
apiVersion: v1
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
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
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
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: default, namespace: gatehouse-system}
spec:
  sslConfig: {secretRef: {name: tls, namespace: gatehouse-system}}
  virtualHost:
    domains: ["*"]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options: {extauth: {configRef: {name: oidc, namespace: gatehouse-system}}}
`, b64([]byte(clientSecret)), b64(cert), b64(key), stringSecret)
	return yaml, secretValues(clientSecret, stringSecret, string(key))
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

// AssertNoSecret fails when out contains any of secrets.
func assertNoSecret(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows the secret value %.12q…", what, s)
		}
	}
}

func applied(t *testing.T, yaml string) *pipeline.Pipeline {
	t.Helper()
	in, err := (&source.Static{Name: "test", Files: map[string][]byte{"resources.yaml": []byte(yaml)}}).Input()
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop()})
	p.Apply(in)
	return p
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var views = []string{"/snapshots/input", "/snapshots/edge", "/snapshots/proxies", "/snapshots/xds", "/snapshots/health"}

func TestViewsRedactEverySecret(t *testing.T) {
	yaml, secrets := secretResources(t)
	p := applied(t, yaml)
	mux := http.NewServeMux()
	snapshots.Register(mux, snapshots.Options{Stages: p.Stages})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range views {
		t.Run(path, func(t *testing.T) {
			code, body := get(t, srv.URL+path)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d, want 200: %s", path, code, body)
			}
			var env map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"data", "error", "status"}, keys(env)); diff != "" {
				t.Errorf("envelope fields (-want +got):\n%s", diff)
			}
			if string(env["error"]) != `""` {
				t.Errorf("error = %s, want empty", env["error"])
			}
			var st snapshots.Status
			if err := json.Unmarshal(env["status"], &st); err != nil || st.Version != 1 || st.Time.IsZero() || len(st.Counts) == 0 {
				t.Errorf("status = %s (%v), want version 1, a time and counts", env["status"], err)
			}
			assertNoSecret(t, path, body, secrets)
		})
	}
	// The resources holding secrets are shown with their keys.
	_, input := get(t, srv.URL+"/snapshots/input")
	for _, want := range []string{`"client-secret": "<redacted>"`, `"tls.key": "<redacted>"`, `"token": "<redacted>"`, `"tls.crt": "<redacted>"`} {
		if !strings.Contains(input, want) {
			t.Errorf("/snapshots/input does not show %s", want)
		}
	}
	_, xdsView := get(t, srv.URL+"/snapshots/xds")
	if !strings.Contains(xdsView, `"clientSecret": "<redacted>"`) {
		t.Errorf("/snapshots/xds does not show the ExtAuthConfig's clientSecret as <redacted>:\n%s", xdsView)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestViewsBeforeTheFirstSnapshot(t *testing.T) {
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop()})
	mux := http.NewServeMux()
	snapshots.Register(mux, snapshots.Options{Stages: p.Stages})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range views {
		t.Run(path, func(t *testing.T) {
			code, body := get(t, srv.URL+path)
			var env snapshots.Envelope
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			if code != http.StatusServiceUnavailable || env.Error == "" || env.Data != nil {
				t.Errorf("GET %s = %d %s, want 503 with error set and no data", path, code, body)
			}
		})
	}
}

func TestXDSOneRole(t *testing.T) {
	yaml, _ := secretResources(t)
	p := applied(t, yaml)
	mux := http.NewServeMux()
	snapshots.Register(mux, snapshots.Options{Stages: p.Stages})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		role  string
		code  int
		roles []string
	}{
		{role: xds.RoleExtauth, code: 200, roles: []string{xds.RoleExtauth}},
		{role: "", code: 200, roles: []string{xds.RoleExtauth, xds.DefaultProxyRole}},
		{role: "nobody~none", code: 404},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			code, body := get(t, srv.URL+"/snapshots/xds?role="+tt.role)
			if code != tt.code {
				t.Fatalf("code %d, want %d: %s", code, tt.code, body)
			}
			var env struct {
				Data  map[string]json.RawMessage `json:"data"`
				Error string                     `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			var got []string
			for r := range env.Data {
				got = append(got, r)
			}
			if diff := cmp.Diff(tt.roles, sortStrings(got)); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
			if (tt.code != 200) != (env.Error != "") {
				t.Errorf("error = %q with code %d", env.Error, code)
			}
		})
	}
}
