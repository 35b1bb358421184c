package integration_test

import (
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

func TestOIDCLoginCookieSession(t *testing.T) {
	e := newOIDCEnv(t, envOptions{})
	b := harness.NewBrowser(t)
	echo := e.login(t, b, "/private/page?x=1")
	if echo.Path != "/private/page?x=1" {
		t.Errorf("upstream path = %q, want the original /private/page?x=1", echo.Path)
	}
	if got := claims(t, echo.Headers["x-id-token"])["email"]; got != testUser+"@example.test" {
		t.Errorf("email claim in x-id-token = %v", got)
	}
	if echo.Headers["x-access-token"] == "" {
		t.Error("x-access-token is empty")
	}
	// The provider's own cookies share the host 127.0.0.1 and reach the app too; only
	// the step's cookies must be gone.
	if c := echo.Headers["cookie"]; strings.Contains(c, oidc.DefaultCookieName) || !strings.Contains(c, "_session=") {
		t.Errorf("upstream got cookies %q; want the other cookies but not the session cookie", c)
	}
}
