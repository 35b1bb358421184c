package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// extauthReplica is one `gatehouse extauth` process serving the OIDC AuthConfig of
// replicaConfig, and a gRPC client for it that plays Envoy.
type extauthReplica struct {
	proc   *testbin.Process
	client authv3.AuthorizationClient
}

// replicaApp is the origin the replicas' AuthConfig protects. Nothing listens there:
// the test plays the browser and Envoy, sending the Checks Envoy would send.
const replicaApp = "https://app.example.test"

// replicaConfig is an OIDC AuthConfig with Redis sessions, as in examples/oidc.
const replicaConfig = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: oidc, namespace: gatehouse-system}
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: APP/
          callbackPath: /callback
          logoutPath: /logout
          clientId: CLIENT_ID
          clientSecretRef: {name: oauth, namespace: gatehouse-system}
          issuerUrl: ISSUER
          scopes: [email]
          preExpiryBuffer: PRE_EXPIRY
          session:
            failOnFetchFailure: true
            cookieEncryptionKeyRef: {name: cookie-key, namespace: gatehouse-system}
            redis: {cookieName: gh_handle, options: {host: "REDIS"}}
          headers: {idTokenHeader: x-id-token, accessTokenHeader: x-access-token}
---
apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: gatehouse-system}
type: extauth.gatehouse.dev/oauth
stringData: {client-secret: CLIENT_SECRET}
---
apiVersion: v1
kind: Secret
metadata: {name: cookie-key, namespace: gatehouse-system}
type: Opaque
stringData: {cookie-encryption-key: 6f1c3e0a9b2d4f5e8a7c6b5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f}
---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 10s}
`

// startReplicas writes the config for issuer and redis and starts n extauth processes on it.
func startReplicas(t testing.TB, n int, issuer, redis string, preExpiry time.Duration) []*extauthReplica {
	t.Helper()
	dir := t.TempDir()
	doc := strings.NewReplacer("APP", replicaApp, "CLIENT_ID", harness.ClientID, "CLIENT_SECRET", harness.ClientSecret,
		"ISSUER", issuer, "REDIS", redis, "PRE_EXPIRY", preExpiry.String()).Replace(replicaConfig)
	if err := os.WriteFile(filepath.Join(dir, "oidc.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out []*extauthReplica
	for i := 0; i < n; i++ {
		addr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
		p := testbin.Start(t, nil, testbin.Gatehouse(t), "extauth", "--config", dir, "--plugin-dir", t.TempDir(), "--listen", addr, "--admin-listen", admin)
		testbin.WaitTCP(t, p, addr, time.Minute)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		out = append(out, &extauthReplica{proc: p, client: authv3.NewAuthorizationClient(conn)})
	}
	return out
}

// verdict is what Envoy would do with a Check's answer for a browser.
type verdict struct {
	allowed  bool
	status   int               // of a deny
	location string            // of a deny
	headers  map[string]string // added to the upstream request by an allow
	cookies  []*http.Cookie    // set by either
}

func (v verdict) String() string {
	if v.allowed {
		return "allowed"
	}
	return fmt.Sprintf("denied %d to %q", v.status, v.location)
}

// check sends the Check of a browser page load of path with cookie (a Cookie header
// value, may be empty).
func (r *extauthReplica) check(t testing.TB, path, cookie string) verdict {
	t.Helper()
	v, err := r.checkErr(path, cookie)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkErr is check for goroutines other than the test's.
func (r *extauthReplica) checkErr(path, cookie string) (verdict, error) {
	u, _ := url.Parse(replicaApp + path)
	h := map[string]string{":method": "GET", ":path": u.RequestURI(), ":authority": u.Host, ":scheme": "https",
		"accept": "text/html,application/xhtml+xml", "user-agent": "integration-test"}
	if cookie != "" {
		h["cookie"] = cookie
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := r.client.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: u.RequestURI(), Host: u.Host, Scheme: "https", Protocol: "HTTP/1.1", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": "gatehouse-system.oidc"},
	}})
	if err != nil {
		return verdict{}, fmt.Errorf("Check %s: %w", path, err)
	}
	var v verdict
	var set []string
	if code.Code(resp.GetStatus().GetCode()) == code.Code_OK {
		v.allowed, v.headers = true, map[string]string{}
		for _, hv := range resp.GetOkResponse().GetHeaders() {
			v.headers[hv.GetHeader().GetKey()] = hv.GetHeader().GetValue()
		}
		for _, hv := range resp.GetOkResponse().GetResponseHeadersToAdd() {
			if strings.EqualFold(hv.GetHeader().GetKey(), "set-cookie") {
				set = append(set, hv.GetHeader().GetValue())
			}
		}
	} else {
		d := resp.GetDeniedResponse()
		v.status = int(d.GetStatus().GetCode())
		for _, hv := range d.GetHeaders() {
			switch strings.ToLower(hv.GetHeader().GetKey()) {
			case "location":
				v.location = hv.GetHeader().GetValue()
			case "set-cookie":
				set = append(set, hv.GetHeader().GetValue())
			}
		}
	}
	for _, s := range set {
		c, err := http.ParseSetCookie(s)
		if err != nil {
			return verdict{}, fmt.Errorf("Check %s: set-cookie %q: %w", path, s, err)
		}
		v.cookies = append(v.cookies, c)
	}
	return v, nil
}

// replicaLogin logs a user in through replica r as a browser behind Envoy would and
// returns the session cookie's value (the Redis handle).
func replicaLogin(t testing.TB, r *extauthReplica, issuer string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	app, _ := url.Parse(replicaApp + "/")
	page := r.check(t, "/orders", "")
	if page.status != http.StatusFound || !strings.HasPrefix(page.location, issuer+"/") {
		t.Fatalf("page without a session: %v, want 302 to the provider", page)
	}
	jar.SetCookies(app, page.cookies)
	cb := harness.NewBrowser(t).ProviderLogin(t, issuer, page.location, testUser)
	cbURL, err := url.Parse(cb)
	if err != nil || !strings.HasPrefix(cb, replicaApp+"/callback?") {
		t.Fatalf("the provider sent the browser to %q, not the callback", cb)
	}
	back := r.check(t, cbURL.RequestURI(), cookieHeader(jar, cbURL))
	if back.status != http.StatusFound || back.location != replicaApp+"/orders" {
		t.Fatalf("callback: %v, want 302 to the page", back)
	}
	for _, c := range back.cookies {
		if c.Name == "gh_handle" && c.MaxAge >= 0 {
			return c.Value
		}
	}
	t.Fatalf("the callback set no gh_handle cookie: %v", back.cookies)
	return ""
}

func cookieHeader(jar http.CookieJar, u *url.URL) string {
	var parts []string
	for _, c := range jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}
