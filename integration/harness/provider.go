package harness

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// Test client of the provider, registered by provider.js.
const (
	ClientID     = "gatehouse"
	ClientSecret = "gatehouse-test-client-secret-7f3a9c"
)

// ProviderOptions configure one provider.
type ProviderOptions struct {
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	// AccessTokenTTL and IDTokenTTL default to an hour; short ones test refresh.
	AccessTokenTTL, IDTokenTTL time.Duration
	// Port to listen on; a free one when zero.
	Port int
}

// Provider is a running oidc-provider.
type Provider struct {
	Issuer string
	Port   int
	p      *process
}

// StartProvider runs integration/oidcprovider/provider.js on 127.0.0.1 and waits
// until its discovery document answers.
func StartProvider(t testing.TB, o ProviderOptions) *Provider {
	t.Helper()
	dir := filepath.Join(Dir(), "oidcprovider")
	mustExist(t, filepath.Join(dir, "node_modules", "oidc-provider", "package.json"), "oidc-provider")
	node, err := exec.LookPath("node")
	if err != nil {
		mustExist(t, "/usr/bin/node", "node")
	}
	// A free port can be taken by someone else before node binds it; with no port
	// given, another one is tried when the provider exits at once.
	for attempt := 1; ; attempt++ {
		port := o.Port
		if port == 0 {
			port = FreePort(t)
		}
		p := startProvider(t, node, dir, port, o)
		err := p.p.listening(addr(port), 20*time.Second)
		if errors.Is(err, testbin.ErrExited) && o.Port == 0 && attempt < 3 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(p.Issuer + "/.well-known/openid-configuration")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("harness: oidc-provider discovery: %v %v\n%s", err, resp, p.p.Output())
		}
		resp.Body.Close()
		return p
	}
}

func startProvider(t testing.TB, node, dir string, port int, o ProviderOptions) *Provider {
	t.Helper()
	cmd := exec.Command(node, "provider.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PORT="+strconv.Itoa(port),
		"CLIENT_ID="+ClientID,
		"CLIENT_SECRET="+ClientSecret,
		"REDIRECT_URIS="+strings.Join(o.RedirectURIs, " "),
		"POST_LOGOUT_REDIRECT_URIS="+strings.Join(o.PostLogoutRedirectURIs, " "),
	)
	if o.AccessTokenTTL > 0 {
		cmd.Env = append(cmd.Env, "ACCESS_TOKEN_TTL="+strconv.Itoa(int(o.AccessTokenTTL/time.Second)))
	}
	if o.IDTokenTTL > 0 {
		cmd.Env = append(cmd.Env, "ID_TOKEN_TTL="+strconv.Itoa(int(o.IDTokenTTL/time.Second)))
	}
	return &Provider{Issuer: "http://" + addr(port), Port: port, p: start(t, "oidc-provider", cmd)}
}

// Stop stops the provider now (the tests of a provider that went away use this).
func (p *Provider) Stop() { p.p.stop() }

// Output is what the provider printed.
func (p *Provider) Output() string { return p.p.Output() }
