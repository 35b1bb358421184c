package integration_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
)

// TestOIDCNoSecretsInLogs runs logins, a refresh, failures and logouts with debug
// logging on, then looks for every secret value of the run in what the steps logged.
func TestOIDCNoSecretsInLogs(t *testing.T) {
	for _, redis := range []bool{false, true} {
		t.Run(map[bool]string{false: "cookie", true: "redis"}[redis], func(t *testing.T) {
			e := newOIDCEnv(t, envOptions{redis: redis, accessTTL: 5 * time.Second, preExpiry: 4 * time.Second})
			var secrets []string
			b := harness.NewBrowser(t)
			auth := e.startLogin(t, b, "/")
			cb := b.ProviderLogin(t, e.provider.Issuer, auth, testUser)
			secrets = append(secrets, query(t, cb, "code"), query(t, cb, "state"), query(t, auth, "nonce"), query(t, auth, "code_challenge"))
			resp, body := b.Get(t, cb)
			harness.MustStatus(t, resp, body, http.StatusFound)
			for _, c := range resp.Cookies() {
				if c.Value != "" { // the expired flow cookie has none
					secrets = append(secrets, c.Value)
				}
			}
			first := getEcho(t, b, harness.Location(t, resp))
			// Replay and a spent code, to log refusals too.
			callbackStatus(t, b, cb)
			time.Sleep(1500 * time.Millisecond)
			refreshed := getEcho(t, b, e.front(0)+"/")
			for _, h := range []string{"x-id-token", "x-access-token"} {
				secrets = append(secrets, first.Headers[h], refreshed.Headers[h])
			}
			resp, body = b.Get(t, e.front(0)+"/logout")
			harness.MustStatus(t, resp, body, http.StatusFound)
			secrets = append(secrets, e.cfg.ClientSecret, string(e.cfg.Session.CookieEncryptionKey))

			logs := e.logs.String()
			if !strings.Contains(logs, "login completed") || !strings.Contains(logs, "logout") {
				t.Fatalf("the steps' logs were not captured:\n%s", logs)
			}
			for _, s := range secrets {
				if len(s) < 8 {
					t.Fatalf("secret value %q too short to search for; the test collected the wrong thing", s)
				}
				if strings.Contains(logs, s) {
					t.Errorf("a secret value (%.6s…) appears in the logs", s)
				}
				// Long values: a fragment is as bad as the whole.
				if len(s) > 40 && strings.Contains(logs, s[len(s)/2:len(s)/2+20]) {
					t.Errorf("part of a secret value (%.6s…) appears in the logs", s)
				}
			}
		})
	}
}
