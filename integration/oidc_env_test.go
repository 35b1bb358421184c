package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/durationpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/oidc"
)

// oidcEnv is a real provider and one or more fronts, each serving its own OIDC step
// (a replica) for the same app URL; all share the provider and, with Redis, the store.
type oidcEnv struct {
	provider *harness.Provider
	redis    *harness.Redis
	appURL   string
	fronts   []*harness.Front
	logs     *syncbuf.Buffer
	cfg      *extauthv1.OidcAuthorizationCode
	// skew moves the steps' clock forward (expired-state tests).
	skew atomic.Int64
}

type envOptions struct {
	redis       bool
	failOnFetch bool
	replicas    int
	accessTTL   time.Duration
	preExpiry   time.Duration
	timeout     time.Duration
	tweak       func(*extauthv1.OidcAuthorizationCode)
}

const testUser = "alice"

func newOIDCEnv(t *testing.T, o envOptions) *oidcEnv {
	t.Helper()
	if o.replicas == 0 {
		o.replicas = 1
	}
	if o.timeout == 0 {
		o.timeout = 3 * time.Second // generous: -race on two cores; the 200ms default is a Settings matter
	}
	port := harness.FreePort(t)
	e := &oidcEnv{appURL: "http://127.0.0.1:" + itoa(port), logs: &syncbuf.Buffer{}}
	e.provider = harness.StartProvider(t, harness.ProviderOptions{
		RedirectURIs:           []string{e.appURL + "/callback"},
		PostLogoutRedirectURIs: []string{e.appURL + "/"},
		AccessTokenTTL:         o.accessTTL,
		IDTokenTTL:             o.accessTTL,
	})
	e.cfg = &extauthv1.OidcAuthorizationCode{
		AppUrl:       e.appURL + "/",
		CallbackPath: "/callback",
		LogoutPath:   "/logout",
		ClientId:     harness.ClientID,
		ClientSecret: harness.ClientSecret,
		IssuerUrl:    e.provider.Issuer,
		Scopes:       []string{"email"},
		Headers:      &extauthv1.OidcAuthorizationCode_Headers{IdTokenHeader: "x-id-token", AccessTokenHeader: "x-access-token"},
		Session:      &extauthv1.OidcAuthorizationCode_Session{FailOnFetchFailure: o.failOnFetch, CookieEncryptionKey: []byte("0123456789abcdef0123456789abcdef")},
	}
	if o.preExpiry > 0 {
		e.cfg.PreExpiryBuffer = durationpb.New(o.preExpiry)
	}
	if o.redis {
		e.redis = harness.StartRedis(t)
		e.cfg.Session.Redis = &extauthv1.OidcAuthorizationCode_Session_Redis{CookieName: "gh_handle", Host: e.redis.Addr}
	}
	if o.tweak != nil {
		o.tweak(e.cfg)
	}
	for i := 0; i < o.replicas; i++ {
		p := port
		if i > 0 {
			p = harness.FreePort(t)
		}
		step := e.newStep(t)
		e.fronts = append(e.fronts, harness.StartFront(t, p, &chain.Chain{ID: "test", Steps: []chain.Step{step}, Timeout: o.timeout}))
	}
	return e
}

func (e *oidcEnv) newStep(t *testing.T) chain.Step {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	step, err := oidc.New(ctx, e.cfg, oidc.Options{
		Log: zerolog.New(e.logs).Level(zerolog.DebugLevel),
		Now: func() time.Time { return time.Now().Add(time.Duration(e.skew.Load())) },
	})
	if err != nil {
		t.Fatalf("oidc.New: %v", err)
	}
	return step
}

// front is the URL of replica i.
func (e *oidcEnv) front(i int) string { return e.fronts[i].URL }

// login runs a whole login from a protected path of replica 0 and returns the echo
// of the request the upstream got.
func (e *oidcEnv) login(t *testing.T, b *harness.Browser, path string) harness.Echo {
	t.Helper()
	resp, body := b.Get(t, e.front(0)+path)
	harness.MustStatus(t, resp, body, http.StatusFound)
	cb := b.ProviderLogin(t, e.provider.Issuer, harness.Location(t, resp), testUser)
	resp, body = b.Get(t, cb)
	harness.MustStatus(t, resp, body, http.StatusFound)
	back := harness.Location(t, resp)
	if !strings.HasPrefix(back, e.appURL+"/") {
		t.Fatalf("callback sent the browser to %q, outside %s", back, e.appURL)
	}
	return getEcho(t, b, back)
}

// getEcho fetches u, which must be allowed, and returns what the upstream saw.
func getEcho(t *testing.T, b *harness.Browser, u string, header ...string) harness.Echo {
	t.Helper()
	resp, body := b.Get(t, u, header...)
	harness.MustStatus(t, resp, body, http.StatusOK)
	var echo harness.Echo
	if err := json.Unmarshal([]byte(body), &echo); err != nil {
		t.Fatalf("echo: %v: %s", err, body)
	}
	return echo
}

// claims decodes a JWT's payload without verifying it (the step did).
func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	raw, err := base64URL(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func query(t *testing.T, u, key string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query().Get(key)
}
