package integration_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// startLogin requests a protected path without a session and returns the provider
// authorization URL the step redirected to.
func (e *oidcEnv) startLogin(t *testing.T, b *harness.Browser, path string) string {
	t.Helper()
	resp, body := b.Get(t, e.front(0)+path)
	harness.MustStatus(t, resp, body, http.StatusFound)
	loc := harness.Location(t, resp)
	if !strings.HasPrefix(loc, e.provider.Issuer+"/") {
		t.Fatalf("login redirect to %q, not to the provider", loc)
	}
	return loc
}

// callbackStatus fetches a callback URL and returns its status, failing the test if
// it set a session cookie anyway.
func callbackStatus(t *testing.T, b *harness.Browser, cb string) int {
	t.Helper()
	resp, _ := b.Get(t, cb)
	for _, c := range resp.Cookies() {
		if resp.StatusCode != http.StatusFound && c.Name == oidc.DefaultCookieName && c.MaxAge >= 0 && c.Value != "" {
			t.Errorf("callback answered %d and set a session cookie", resp.StatusCode)
		}
	}
	return resp.StatusCode
}

func withQuery(t *testing.T, u string, set map[string]string, del ...string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	for _, k := range del {
		q.Del(k)
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// TestOIDCCallbackState covers the checks that bind a callback to the browser that
// started the login: none of these may end in a session.
func TestOIDCCallbackState(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	tests := []struct {
		name string
		// run gets a browser whose login reached the callback URL cb, and returns
		// the callback URL to request (after doing whatever the case needs).
		run  func(t *testing.T, b *harness.Browser, cb string) string
		want int
	}{{
		name: "tampered state",
		run: func(t *testing.T, _ *harness.Browser, cb string) string {
			s := query(t, cb, "state")
			return withQuery(t, cb, map[string]string{"state": flip(s)})
		},
		want: http.StatusBadRequest,
	}, {
		name: "missing state",
		run:  func(t *testing.T, _ *harness.Browser, cb string) string { return withQuery(t, cb, nil, "state") },
		want: http.StatusBadRequest,
	}, {
		name: "expired state",
		run: func(t *testing.T, _ *harness.Browser, cb string) string {
			e.skew.Store(int64(11 * time.Minute))
			t.Cleanup(func() { e.skew.Store(0) })
			return cb
		},
		want: http.StatusBadRequest,
	}, {
		name: "state without its flow cookie",
		run: func(t *testing.T, b *harness.Browser, cb string) string {
			*b = *harness.NewBrowser(t) // another browser: same URL, no flow cookie
			return cb
		},
		want: http.StatusBadRequest,
	}, {
		name: "flow cookie of another login",
		run: func(t *testing.T, b *harness.Browser, cb string) string {
			// A second login in the same browser has its own flow cookie; this
			// callback's state must still not match that cookie.
			other := e.startLogin(t, b, "/other")
			return withQuery(t, cb, map[string]string{"state": query(t, other, "state") + "x"})
		},
		want: http.StatusBadRequest,
	}, {
		name: "mismatched iss",
		run: func(t *testing.T, _ *harness.Browser, cb string) string {
			return withQuery(t, cb, map[string]string{"iss": "http://127.0.0.1:1/evil"})
		},
		want: http.StatusBadRequest,
	}, {
		name: "missing iss from a provider that announces it",
		run:  func(t *testing.T, _ *harness.Browser, cb string) string { return withQuery(t, cb, nil, "iss") },
		want: http.StatusBadRequest,
	}, {
		name: "replayed state",
		run: func(t *testing.T, b *harness.Browser, cb string) string {
			flowCookies := b.Jar.Cookies(mustURL(t, cb))
			if got := callbackStatus(t, b, cb); got != http.StatusFound {
				t.Fatalf("first callback: %d", got)
			}
			b.Jar.SetCookies(mustURL(t, cb), flowCookies) // an attacker who kept the flow cookie
			return cb
		},
		want: http.StatusBadRequest,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := harness.NewBrowser(t)
			cb := b.ProviderLogin(t, e.provider.Issuer, e.startLogin(t, b, "/"), testUser)
			target := tt.run(t, b, cb)
			if got := callbackStatus(t, b, target); got != tt.want {
				t.Errorf("callback status = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOIDCAccessDenied(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	cb := b.ProviderAbort(t, e.provider.Issuer, e.startLogin(t, b, "/"))
	if query(t, cb, "error") != "access_denied" {
		t.Fatalf("provider did not answer access_denied: %s", cb)
	}
	if got := callbackStatus(t, b, cb); got != http.StatusForbidden {
		t.Errorf("callback status = %d, want 403", got)
	}
}

func TestOIDCReusedCode(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	cb := b.ProviderLogin(t, e.provider.Issuer, e.startLogin(t, b, "/"), testUser)
	if got := callbackStatus(t, b, cb); got != http.StatusFound {
		t.Fatalf("first callback: %d", got)
	}
	// A fresh login, answered with the code already spent.
	b2 := harness.NewBrowser(t)
	second := e.startLogin(t, b2, "/again")
	reused := withQuery(t, cb, map[string]string{"state": query(t, second, "state")})
	if got := callbackStatus(t, b2, reused); got != http.StatusUnauthorized {
		t.Errorf("callback with a spent code: status %d, want 401", got)
	}
}

func TestOIDCParallelLogins(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	// Two tabs start a login before either finishes; they finish in reverse order.
	authA, authB := e.startLogin(t, b, "/tab-a"), e.startLogin(t, b, "/tab-b")
	cbA := b.ProviderLogin(t, e.provider.Issuer, authA, testUser)
	cbB := b.ProviderLogin(t, e.provider.Issuer, authB, testUser)
	for _, tc := range []struct{ cb, back string }{{cbB, "/tab-b"}, {cbA, "/tab-a"}} {
		resp, body := b.Get(t, tc.cb)
		harness.MustStatus(t, resp, body, http.StatusFound)
		if got := harness.Location(t, resp); got != e.appURL+tc.back {
			t.Errorf("callback went back to %q, want %q", got, e.appURL+tc.back)
		}
	}
	if echo := getEcho(t, b, e.front(0)+"/tab-a"); echo.Headers["x-id-token"] == "" {
		t.Error("no ID token upstream after both logins")
	}
}

func TestOIDCProviderDownAtCallback(t *testing.T) {
	e := newOIDCEnv(t, envOptions{timeout: 500 * time.Millisecond})
	b := harness.NewBrowser(t)
	cb := b.ProviderLogin(t, e.provider.Issuer, e.startLogin(t, b, "/"), testUser)
	e.provider.Stop()
	start := time.Now()
	if got := callbackStatus(t, b, cb); got != http.StatusServiceUnavailable {
		t.Errorf("callback with the provider down: status %d, want 503", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("callback took %s with the provider down; the request timeout is 500ms", d)
	}
}

func TestOIDCXHRGets401(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	for _, h := range [][]string{
		{"X-Requested-With", "XMLHttpRequest"},
		{"Accept", "application/json"},
	} {
		t.Run(h[0], func(t *testing.T) {
			b := harness.NewBrowser(t)
			resp, body := b.Get(t, e.front(0)+"/api/data", h...)
			harness.MustStatus(t, resp, body, http.StatusUnauthorized)
			if resp.Header.Get("Location") != "" || len(resp.Cookies()) != 0 {
				t.Errorf("401 carries a redirect or cookies: %v", resp.Header)
			}
		})
	}
	t.Run("browser navigation still redirects", func(t *testing.T) {
		b := harness.NewBrowser(t)
		resp, body := b.Get(t, e.front(0)+"/page", "Accept", "text/html,application/json;q=0.9")
		harness.MustStatus(t, resp, body, http.StatusFound)
	})
}

func flip(s string) string {
	if s == "" {
		return "x"
	}
	c := byte('A')
	if s[0] == 'A' {
		c = 'B'
	}
	return string(c) + s[1:]
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
