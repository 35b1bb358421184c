package integration_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/oidc"
)

// devOIDC is `gatehouse dev` serving examples/oidc (ports rewritten to free ones)
// with a real provider, as the walk-through in examples/oidc/README.md runs it.
type devOIDC struct {
	provider *harness.Provider
	redis    *harness.Redis
	proc     *testbin.Process
	appURL   string // the dev gateway
	admin    string
}

type devOptions struct {
	redis        bool
	providerDown bool
}

func startDevOIDC(t *testing.T, o devOptions) *devOIDC {
	t.Helper()
	gw, ex, echo, admin := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	d := &devOIDC{appURL: "http://" + gw, admin: admin}
	issuer := "http://" + testbin.FreeAddr(t) // nothing listens there
	if !o.providerDown {
		d.provider = harness.StartProvider(t, harness.ProviderOptions{
			RedirectURIs:           []string{d.appURL + "/callback"},
			PostLogoutRedirectURIs: []string{d.appURL},
		})
		issuer = d.provider.Issuer
	}
	var echoPort int
	fmt.Sscanf(echo, "127.0.0.1:%d", &echoPort)
	replace := []string{
		"http://127.0.0.1:8080", d.appURL,
		"http://127.0.0.1:9000", issuer,
		"port: 8090", fmt.Sprintf("port: %d", echoPort),
	}
	if o.redis {
		d.redis = harness.StartRedis(t)
		replace = append(replace, "            failOnFetchFailure: true\n",
			"            failOnFetchFailure: true\n            redis: {cookieName: gh_handle, options: {host: \""+d.redis.Addr+"\"}}\n")
	}
	dir := copyExample(t, filepath.Join(harness.RepoRoot(), "examples", "oidc"), strings.NewReplacer(replace...))
	d.proc = testbin.Start(t, []string{"LOG_LEVEL=debug"}, testbin.Gatehouse(t), "dev", "--resources", dir,
		"--plugin-dir", t.TempDir(), "--listen", gw, "--extauth-listen", ex, "--echo-listen", echo, "--admin-listen", admin)
	testbin.WaitTCP(t, d.proc, gw, 20*time.Second)
	testbin.WaitTCP(t, d.proc, admin, 20*time.Second)
	return d
}

// copyExample copies the YAML files of dir into a temporary folder through r.
func copyExample(t *testing.T, dir string, r *strings.Replacer) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example resources in %s: %v", dir, err)
	}
	out := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), []byte(r.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (d *devOIDC) statuses(t *testing.T) []server.Status {
	t.Helper()
	resp, err := http.Get("http://" + d.admin + "/auth-configs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []server.Status
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitServing waits until the AuthConfig has a status.
func (d *devOIDC) waitServing(t *testing.T) server.Status {
	t.Helper()
	var st server.Status
	testbin.Eventually(t, 20*time.Second, func() error {
		for _, s := range d.statuses(t) {
			if s.ID == "gatehouse-system.oidc-login" {
				st = s
				return nil
			}
		}
		return fmt.Errorf("no status for gatehouse-system.oidc-login yet")
	})
	return st
}

func TestOIDCDevGatewayLogin(t *testing.T) {
	for _, redis := range []bool{false, true} {
		t.Run(map[bool]string{false: "cookie", true: "redis"}[redis], func(t *testing.T) {
			d := startDevOIDC(t, devOptions{redis: redis})
			if st := d.waitServing(t); st.State != server.StateAccepted {
				t.Fatalf("AuthConfig %s: %s", st.State, st.Reason)
			}
			b := harness.NewBrowser(t)
			resp, body := b.Get(t, d.appURL+"/orders?id=7")
			harness.MustStatus(t, resp, body, http.StatusFound)
			cb := b.ProviderLogin(t, d.provider.Issuer, harness.Location(t, resp), testUser)
			if !strings.HasPrefix(cb, d.appURL+"/callback?") {
				t.Fatalf("provider sent the browser to %q", cb)
			}
			resp, body = b.Get(t, cb)
			harness.MustStatus(t, resp, body, http.StatusFound)
			if got := harness.Location(t, resp); got != d.appURL+"/orders?id=7" {
				t.Errorf("callback sent the browser to %q, want the original URL", got)
			}
			// Two Set-Cookie lines came through ext_authz: the session and the expired flow cookie.
			if n := len(resp.Header.Values("Set-Cookie")); n != 2 {
				t.Errorf("callback response has %d Set-Cookie lines, want 2: %q", n, resp.Header.Values("Set-Cookie"))
			}
			var echo struct {
				Path    string            `json:"path"`
				Headers map[string]string `json:"headers"`
			}
			resp, body = b.Get(t, d.appURL+"/orders?id=7")
			harness.MustStatus(t, resp, body, http.StatusOK)
			if err := json.Unmarshal([]byte(body), &echo); err != nil {
				t.Fatal(err)
			}
			if got := claims(t, echo.Headers["x-id-token"])["email"]; got != testUser+"@example.test" {
				t.Errorf("upstream x-id-token email = %v", got)
			}
			cookieName := oidc.DefaultCookieName
			if redis {
				cookieName = "gh_handle"
			}
			if strings.Contains(echo.Headers["cookie"], cookieName+"=") {
				t.Errorf("upstream got the session cookie: %q", echo.Headers["cookie"])
			}
			handle, _ := b.Cookie(t, d.appURL, cookieName)
			if redis && !d.redis.Exists(t, oidc.RedisSessionKey(handle)) {
				t.Error("no session in Redis for the handle")
			}

			resp, body = b.Get(t, d.appURL+"/logout")
			harness.MustStatus(t, resp, body, http.StatusFound)
			if loc := harness.Location(t, resp); !strings.HasPrefix(loc, d.provider.Issuer+"/session/end?") {
				t.Errorf("logout went to %q, not the provider's end-session endpoint", loc)
			}
			if redis && d.redis.Exists(t, oidc.RedisSessionKey(handle)) {
				t.Error("session still in Redis after logout")
			}
			if _, ok := b.Cookie(t, d.appURL, cookieName); ok {
				t.Error("logout did not expire the session cookie")
			}
			if resp, _ = b.Get(t, d.appURL+"/orders"); resp.StatusCode != http.StatusFound {
				t.Errorf("after logout: status %d, want 302 to a new login", resp.StatusCode)
			}
			// With Redis the session is gone on the server too, so a copy of the cookie
			// is worthless. (A cookie session is self-contained: a copy kept by someone
			// stays usable until its tokens expire, though the provider revoked them.)
			if redis {
				resp, _ = harness.NewBrowser(t).Get(t, d.appURL+"/orders", "Cookie", cookieName+"="+handle)
				if resp.StatusCode == http.StatusOK {
					t.Error("the handle from before logout still lets requests through")
				}
			}
		})
	}
}

func TestOIDCDevProviderDownAtConfigTime(t *testing.T) {
	d := startDevOIDC(t, devOptions{providerDown: true})
	st := d.waitServing(t)
	if st.State != server.StateRejected || !strings.Contains(st.Reason, "discovery") {
		t.Errorf("AuthConfig status %s %q; want Rejected naming the provider's discovery", st.State, st.Reason)
	}
	resp, _ := harness.NewBrowser(t).Get(t, d.appURL+"/")
	if resp.StatusCode == http.StatusOK {
		t.Error("a request went through while the AuthConfig is rejected")
	}
}
