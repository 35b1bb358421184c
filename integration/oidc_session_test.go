package integration_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/oidc"
)

// userinfoStatus asks the provider's userinfo endpoint about an access token.
func (e *oidcEnv) userinfoStatus(t *testing.T, accessToken string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.provider.Issuer+"/me", nil)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestOIDCLoginRedisSession(t *testing.T) {
	e := newOIDCEnv(t, envOptions{redis: true})
	b := harness.NewBrowser(t)
	echo := e.login(t, b, "/")
	if got := claims(t, echo.Headers["x-id-token"])["email"]; got != testUser+"@example.test" {
		t.Errorf("email claim = %v", got)
	}
	handle, ok := b.Cookie(t, e.appURL, "gh_handle")
	if !ok {
		t.Fatal("no gh_handle cookie after login")
	}
	if len(handle) != 43 || strings.Contains(handle, ".") {
		t.Errorf("cookie %q is not a bare 32-byte handle", handle)
	}
	if !e.redis.Exists(t, oidc.RedisSessionKey(handle)) {
		t.Fatal("the session is not in Redis under the handle's key")
	}

	// Logout: key gone, cookie expired, browser sent to the provider's end-session endpoint.
	resp, body := b.Get(t, e.front(0)+"/logout")
	harness.MustStatus(t, resp, body, http.StatusFound)
	loc := harness.Location(t, resp)
	if !strings.HasPrefix(loc, e.provider.Issuer+"/session/end?") || query(t, loc, "id_token_hint") != echo.Headers["x-id-token"] ||
		query(t, loc, "post_logout_redirect_uri") != e.appURL+"/" {
		t.Errorf("logout redirect = %q; want the end-session endpoint with id_token_hint and post_logout_redirect_uri", loc)
	}
	if e.redis.Exists(t, oidc.RedisSessionKey(handle)) {
		t.Error("the session key is still in Redis after logout")
	}
	if _, ok := b.Cookie(t, e.appURL, "gh_handle"); ok {
		t.Error("the handle cookie was not expired")
	}
	// The old cookie, replayed, no longer works.
	old := harness.NewBrowser(t)
	resp, _ = old.Get(t, e.front(0)+"/", "Cookie", "gh_handle="+handle)
	if resp.StatusCode != http.StatusFound {
		t.Errorf("old handle after logout: status %d, want 302 to a new login", resp.StatusCode)
	}
}

func TestOIDCLogoutRevokesTokens(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	at := e.login(t, b, "/").Headers["x-access-token"]
	if got := e.userinfoStatus(t, at); got != http.StatusOK {
		t.Fatalf("userinfo with the fresh access token: %d", got)
	}
	resp, body := b.Get(t, e.front(0)+"/logout")
	harness.MustStatus(t, resp, body, http.StatusFound)
	if got := e.userinfoStatus(t, at); got != http.StatusUnauthorized {
		t.Errorf("userinfo with the access token after logout: %d, want 401 (revoked)", got)
	}
	if _, ok := b.Cookie(t, e.appURL, oidc.DefaultCookieName); ok {
		t.Error("session cookie not expired by logout")
	}
	resp, _ = b.Get(t, e.front(0)+"/")
	if resp.StatusCode != http.StatusFound {
		t.Errorf("after logout: status %d, want 302 to a new login", resp.StatusCode)
	}
}

func TestOIDCRefreshBeforeExpiry(t *testing.T) {
	for _, redis := range []bool{false, true} {
		name := map[bool]string{false: "cookie", true: "redis"}[redis]
		t.Run(name, func(t *testing.T) {
			// Tokens live 6s; the step refreshes them once fewer than 4s are left.
			e := newOIDCEnv(t, envOptions{redis: redis, accessTTL: 6 * time.Second, preExpiry: 4 * time.Second})
			b := harness.NewBrowser(t)
			first := e.login(t, b, "/")
			again := getEcho(t, b, e.front(0)+"/")
			if again.Headers["x-access-token"] != first.Headers["x-access-token"] {
				t.Fatal("tokens were refreshed while far from expiry")
			}
			time.Sleep(2500 * time.Millisecond)
			refreshed := getEcho(t, b, e.front(0)+"/")
			if refreshed.Headers["x-access-token"] == first.Headers["x-access-token"] {
				t.Fatal("access token not refreshed within the pre-expiry buffer")
			}
			if refreshed.Headers["x-id-token"] == first.Headers["x-id-token"] {
				t.Error("ID token not replaced by the refreshed one")
			}
			if got := e.userinfoStatus(t, refreshed.Headers["x-access-token"]); got != http.StatusOK {
				t.Errorf("refreshed access token rejected by the provider: %d", got)
			}
			// The refreshed session is what the browser (or the store) now holds.
			if later := getEcho(t, b, e.front(0)+"/"); later.Headers["x-access-token"] != refreshed.Headers["x-access-token"] {
				t.Error("the next request did not use the refreshed tokens")
			}
		})
	}
}

func TestOIDCReplicasShareRedis(t *testing.T) {
	e := newOIDCEnv(t, envOptions{redis: true, replicas: 2})
	b := harness.NewBrowser(t)
	first := e.login(t, b, "/")
	// Port-less cookies: the browser sends the handle to the second replica too.
	other := getEcho(t, b, e.front(1)+"/elsewhere")
	if other.Headers["x-id-token"] != first.Headers["x-id-token"] {
		t.Error("the second replica did not find the session the first one created")
	}
}

func TestOIDCTamperedSessionCookie(t *testing.T) {
	for _, redis := range []bool{false, true} {
		name := map[bool]string{false: "cookie", true: "redis"}[redis]
		t.Run(name, func(t *testing.T) {
			e := newOIDCEnv(t, envOptions{redis: redis})
			b := harness.NewBrowser(t)
			e.login(t, b, "/")
			cookie := oidc.DefaultCookieName
			if redis {
				cookie = "gh_handle"
			}
			v, _ := b.Cookie(t, e.appURL, cookie)
			for _, bad := range []string{flip(v), v[:len(v)-1], v + "A", "", "not-a-session"} {
				resp, _ := harness.NewBrowser(t).Get(t, e.front(0)+"/", "Cookie", cookie+"="+bad)
				if resp.StatusCode != http.StatusFound {
					t.Errorf("tampered cookie %.12q…: status %d, want 302 to a login", bad, resp.StatusCode)
				}
			}
		})
	}
}

func TestOIDCClientTokenHeadersStripped(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	real := e.login(t, b, "/")
	forged := getEcho(t, b, e.front(0)+"/", "X-Id-Token", "forged.id.token", "X-Access-Token", "forged")
	if forged.Headers["x-id-token"] != real.Headers["x-id-token"] || forged.Headers["x-access-token"] != real.Headers["x-access-token"] {
		t.Errorf("client-sent token headers reached the upstream: %q / %q", forged.Headers["x-id-token"], forged.Headers["x-access-token"])
	}
	// Without a session the forged header gets nowhere near the upstream.
	resp, _ := harness.NewBrowser(t).Get(t, e.front(0)+"/", "X-Id-Token", "forged.id.token")
	if resp.StatusCode != http.StatusFound {
		t.Errorf("forged header without a session: status %d, want 302", resp.StatusCode)
	}
}

func TestOIDCRedisDown(t *testing.T) {
	for _, tc := range []struct {
		failOnFetch bool
		want        int
	}{{true, http.StatusServiceUnavailable}, {false, http.StatusFound}} {
		t.Run(map[bool]string{true: "failOnFetchFailure true", false: "failOnFetchFailure false"}[tc.failOnFetch], func(t *testing.T) {
			e := newOIDCEnv(t, envOptions{redis: true, failOnFetch: tc.failOnFetch, timeout: time.Second})
			b := harness.NewBrowser(t)
			e.login(t, b, "/")
			e.redis.Stop()
			// The step serves sessions from its client-side cache, which it drops when
			// the connection to Redis closes: a Check racing that close may still be
			// allowed, none after it.
			resp, body := b.Get(t, e.front(0)+"/")
			for deadline := time.Now().Add(5 * time.Second); resp.StatusCode == http.StatusOK && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				resp, body = b.Get(t, e.front(0)+"/")
			}
			harness.MustStatus(t, resp, body, tc.want)
			if again, body := b.Get(t, e.front(0)+"/"); again.StatusCode != tc.want {
				t.Errorf("the next Check with Redis down: %d, want %d: %s", again.StatusCode, tc.want, body)
			}
			if tc.want == http.StatusFound && !strings.HasPrefix(harness.Location(t, resp), e.provider.Issuer+"/") {
				t.Errorf("failOnFetchFailure false: redirect to %q, want a new login", harness.Location(t, resp))
			}
			// A login that reaches the callback while Redis is down is refused too.
			b2 := harness.NewBrowser(t)
			cb := b2.ProviderLogin(t, e.provider.Issuer, e.startLogin(t, b2, "/"), testUser)
			if got := callbackStatus(t, b2, cb); got != http.StatusServiceUnavailable {
				t.Errorf("callback with Redis down: %d, want 503", got)
			}
		})
	}
}

func TestOIDCProviderDownAtConfigTime(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	e.provider.Stop()
	start := time.Now()
	_, err := oidc.New(context.Background(), e.cfg, oidc.Options{})
	if err == nil {
		t.Fatal("oidc.New succeeded with the provider down")
	}
	if !strings.Contains(err.Error(), "provider "+e.provider.Issuer+": discovery") {
		t.Errorf("error %q does not say the provider's discovery failed", err)
	}
	if strings.Contains(err.Error(), e.cfg.ClientSecret) {
		t.Error("the error shows the client secret")
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("New took %s", d)
	}
	// The steps built before it went away keep deciding from what they fetched: a
	// request without a session is still sent to the login page, not let through.
	out := e.fronts[0].Chain.Run(context.Background(), &pluginapi.AuthorizationRequest{Method: "GET", Path: "/", Headers: map[string]string{}})
	if out.Response.Allowed || out.Response.StatusCode() != http.StatusFound {
		t.Errorf("request without session, provider down: %+v", out.Response)
	}
}
