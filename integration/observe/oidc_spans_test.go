package observe_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/protobuf/encoding/protojson"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// oidcApp is the origin the OIDC AuthConfig protects; the test plays the browser and Envoy.
const oidcApp = "https://app.example.test"

// oidcConfig is an OIDC AuthConfig with Redis sessions, as in examples/oidc.
const oidcConfig = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: oidc, namespace: gatehouse-system}
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: APP/
          callbackPath: /callback
          clientId: CLIENT_ID
          clientSecretRef: {name: oauth, namespace: gatehouse-system}
          issuerUrl: ISSUER
          scopes: [email]
          session:
            failOnFetchFailure: true
            redis: {cookieName: gh_handle, options: {host: "REDIS"}}
          headers: {idTokenHeader: x-id-token, accessTokenHeader: x-access-token}
---
apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: gatehouse-system}
type: extauth.gatehouse.dev/oauth
stringData: {client-secret: CLIENT_SECRET}
---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 10s}
`

// TestOIDCStepSpans: with the real OpenID provider and a real redis-server, a login
// through `gatehouse extauth` exported over OTLP shows the step's provider call (the
// token exchange, under the callback's Check) and its Redis calls (the session SET
// there, the session GET under the next page's Check) as spans under the step's span;
// no span anywhere carries the client secret, the code, a token or a cookie value.
func TestOIDCStepSpans(t *testing.T) {
	r, otlp := startGRPCReceiver(t)
	provider := harness.StartProvider(t, harness.ProviderOptions{RedirectURIs: []string{oidcApp + "/callback"}})
	redis := harness.StartRedis(t)
	dir := t.TempDir()
	doc := strings.NewReplacer("APP", oidcApp, "CLIENT_ID", harness.ClientID, "CLIENT_SECRET", harness.ClientSecret,
		"ISSUER", provider.Issuer, "REDIS", redis.Addr).Replace(oidcConfig)
	testbin.WriteFile(t, filepath.Join(dir, "oidc.yaml"), doc)
	addr := testbin.FreeAddr(t)
	ex := testbin.Start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + otlp, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_TRACES_SAMPLER=", "OTEL_SERVICE_NAME="},
		testbin.Gatehouse(t), "extauth", "--config", dir, "--plugin-dir", t.TempDir(), "--listen", addr, "--trace-sample-ratio", "1")
	testbin.WaitTCP(t, ex, addr, time.Minute)
	client := authv3.NewAuthorizationClient(testbin.Dial(t, addr))

	// The login: the page redirects to the provider, the user logs in there, and the
	// callback's Check exchanges the code and saves the session.
	jar, _ := cookiejar.New(nil)
	app, _ := url.Parse(oidcApp + "/")
	var page oidcVerdict
	testbin.Eventually(t, 30*time.Second, func() error { // until the step has read the provider's discovery
		page = oidcCheck(t, client, "/orders", "", "")
		if page.status != http.StatusFound || !strings.HasPrefix(page.location, provider.Issuer+"/") {
			return fmt.Errorf("page without a session: %+v, want 302 to the provider", page)
		}
		return nil
	})
	jar.SetCookies(app, page.cookies)
	cb := harness.NewBrowser(t).ProviderLogin(t, provider.Issuer, page.location, "alice")
	cbURL, err := url.Parse(cb)
	if err != nil || !strings.HasPrefix(cb, oidcApp+"/callback?") {
		t.Fatalf("the provider sent the browser to %q, not the callback", cb)
	}
	callbackTrace := randomHex(16)
	back := oidcCheck(t, client, cbURL.RequestURI(), cookies(jar, cbURL), callbackTrace)
	if back.status != http.StatusFound {
		t.Fatalf("callback: %+v, want 302 to the page", back)
	}
	jar.SetCookies(app, back.cookies)
	var handle string
	for _, c := range back.cookies {
		if c.Name == "gh_handle" && c.MaxAge >= 0 {
			handle = c.Value
		}
	}
	sessionTrace := randomHex(16)
	in := oidcCheck(t, client, "/orders", "gh_handle="+handle, sessionTrace)
	if !in.allowed || in.headers["x-access-token"] == "" || in.headers["x-id-token"] == "" {
		t.Fatalf("page with the session: %+v, want allowed with both tokens", in)
	}

	// Every span of the two traces has arrived once the step spans' children have.
	want := map[string][]string{callbackTrace: {"oidc token exchange", "redis SET"}, sessionTrace: {"redis GET"}}
	var spans []receivedSpan
	testbin.Eventually(t, 15*time.Second, func() error {
		spans, _ = r.received()
		for trace, names := range want {
			for _, name := range names {
				if err := underStep(spans, trace, name); err != nil {
					return err
				}
			}
		}
		return nil
	})

	secrets := map[string]string{"client secret": harness.ClientSecret, "code": cbURL.Query().Get("code"),
		"access token": in.headers["x-access-token"], "ID token": in.headers["x-id-token"], "session handle": handle}
	for _, c := range jar.Cookies(app) {
		secrets["cookie "+c.Name] = c.Value
	}
	for what, v := range secrets {
		if len(v) < 8 {
			t.Fatalf("%s %q: too short to look for", what, v)
		}
	}
	for _, s := range spans {
		b, err := protojson.Marshal(s.span)
		if err != nil {
			t.Fatal(err)
		}
		for what, v := range secrets {
			if strings.Contains(string(b), v) {
				t.Errorf("span %s carries the %s", s.span.GetName(), what)
			}
		}
	}
}

// underStep finds the span name in trace and checks that its parent is the trace's
// extauth.step span, itself under the trace's extauth.Check span.
func underStep(spans []receivedSpan, trace, name string) error {
	byID := map[string]receivedSpan{}
	var found *receivedSpan
	for i, s := range spans {
		if hex.EncodeToString(s.span.GetTraceId()) != trace {
			continue
		}
		byID[string(s.span.GetSpanId())] = s
		if s.span.GetName() == name {
			found = &spans[i]
		}
	}
	if found == nil {
		return fmt.Errorf("no %q span in trace %s yet (%d spans of it)", name, trace, len(byID))
	}
	step, ok := byID[string(found.span.GetParentSpanId())]
	if !ok || step.span.GetName() != "extauth.step" {
		return fmt.Errorf("%q in trace %s: its parent is not the extauth.step span (yet)", name, trace)
	}
	if check, ok := byID[string(step.span.GetParentSpanId())]; !ok || check.span.GetName() != "extauth.Check" {
		return fmt.Errorf("%q in trace %s: the step span's parent is not the extauth.Check span (yet)", name, trace)
	}
	return nil
}

// oidcVerdict is what Envoy would do with a Check's answer for a browser.
type oidcVerdict struct {
	allowed  bool
	status   int
	location string
	headers  map[string]string
	cookies  []*http.Cookie
}

// oidcCheck sends the Check of a browser page load of path with cookie (a Cookie header
// value, may be empty), in trace when it is not empty.
func oidcCheck(t *testing.T, client authv3.AuthorizationClient, path, cookie, trace string) oidcVerdict {
	t.Helper()
	u, _ := url.Parse(oidcApp + path)
	h := map[string]string{":method": "GET", ":path": u.RequestURI(), ":authority": u.Host, ":scheme": "https",
		"accept": "text/html", "user-agent": "integration-test"}
	if cookie != "" {
		h["cookie"] = cookie
	}
	if trace != "" {
		h["traceparent"] = "00-" + trace + "-" + randomHex(8) + "-01"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := client.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: u.RequestURI(), Host: u.Host, Scheme: "https", Protocol: "HTTP/1.1", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": "gatehouse-system.oidc"},
	}})
	if err != nil {
		t.Fatalf("Check %s: %v", path, err)
	}
	v := oidcVerdict{headers: map[string]string{}}
	var set []string
	if code.Code(resp.GetStatus().GetCode()) == code.Code_OK {
		v.allowed = true
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
			t.Fatalf("Check %s: set-cookie: %v", path, err)
		}
		v.cookies = append(v.cookies, c)
	}
	return v
}

// cookies is the Cookie header the jar sends to u.
func cookies(jar http.CookieJar, u *url.URL) string {
	var parts []string
	for _, c := range jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}
