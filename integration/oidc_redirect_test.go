package integration_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/pluginapi"
)

// TestOIDCOpenRedirect sends login-starting requests whose path (as a proxy passes it
// on, raw) tries to turn the post-login redirect into one to another site. After a
// real login the browser must land on the application's origin every time.
func TestOIDCOpenRedirect(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	app := mustURL(t, e.appURL)
	payloads := []struct{ name, path string }{
		{"scheme-relative", "//evil.example/x"},
		{"backslash", `/\evil.example`},
		{"absolute URL", "https://evil.example/"},
		{"javascript scheme", "javascript:alert(document.cookie)"},
		{"encoded slashes", "/%2F%2Fevil.example"},
		{"encoded backslash", "/%5Cevil.example"},
		{"userinfo after origin", "@evil.example/"},
		{"userinfo in path", "/@evil.example"},
		{"userinfo with authority", "//" + app.Host + "@evil.example/"},
		{"tab in slashes", "/\t/evil.example"},
		{"triple slash", "///evil.example"},
		{"empty", ""},
	}
	for _, p := range payloads {
		t.Run(p.name, func(t *testing.T) {
			b := harness.NewBrowser(t)
			out := e.fronts[0].Chain.Run(context.Background(), &pluginapi.AuthorizationRequest{
				Method: "GET", Path: p.path, Host: "evil.example", Scheme: "http",
				Headers: map[string]string{"host": "evil.example", "accept": "text/html"},
			})
			if out.Response.Allowed || out.Response.StatusCode() != http.StatusFound {
				t.Fatalf("login start: %+v", out.Response)
			}
			for _, sc := range out.Response.ResponseHeaderValues["set-cookie"] {
				c, err := http.ParseSetCookie(sc)
				if err != nil {
					t.Fatal(err)
				}
				b.Jar.SetCookies(mustURL(t, e.appURL+"/callback"), []*http.Cookie{c})
			}
			cb := b.ProviderLogin(t, e.provider.Issuer, out.Response.ResponseHeaders["location"], testUser)
			resp, body := b.Get(t, cb)
			harness.MustStatus(t, resp, body, http.StatusFound)
			loc := resp.Header.Get("Location")
			// Resolve the way a browser does, backslashes included.
			target, err := url.Parse(strings.ReplaceAll(loc, `\`, "/"))
			if err != nil {
				t.Fatalf("Location %q: %v", loc, err)
			}
			target = resp.Request.URL.ResolveReference(target)
			if target.Scheme != app.Scheme || target.Host != app.Host || target.User != nil {
				t.Errorf("payload %q: after login the browser goes to %q (%s://%s), off the app origin %s", p.path, loc, target.Scheme, target.Host, e.appURL)
			}
			if !strings.HasPrefix(loc, e.appURL+"/") {
				t.Errorf("payload %q: Location %q is not an absolute URL on %s", p.path, loc, e.appURL)
			}
		})
	}
}
