// Package oidc is the built-in OpenID Connect authorization-code login step
// (AuthConfig oauth2.oidcAuthorizationCode).
//
// Everything happens inside Check, through allow and deny responses:
//
//   - no session: deny 302 to the provider with a fresh state, nonce and PKCE S256
//     challenge, bound to this browser by a sealed per-login flow cookie (401 for
//     requests that cannot follow a redirect);
//   - callbackPath: check error, state and iss, exchange the code, verify the ID token,
//     then deny 302 back to the original URL with the session cookie;
//   - a valid session: allow, with the tokens in the configured headers and the
//     session cookie taken out of the upstream request (refreshed shortly before expiry);
//   - logoutPath: clear the session, revoke the tokens, go to the provider's end-session
//     endpoint or afterLogoutUrl.
//
// Discovery and keys are fetched by New and refreshed in the background until the
// config is replaced; the request path never waits for them.
package oidc

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// storeCloseGrace is how long a replaced step keeps its store connections open.
const storeCloseGrace = 10 * time.Second

// Options are the process-wide settings of OIDC steps.
type Options struct {
	// Log receives warnings and failures; tokens, codes and secrets are never logged.
	Log zerolog.Logger
	// HTTPClient talks to the provider; a client with a 10s timeout when nil.
	HTTPClient *http.Client
	// DiscoveryTimeout bounds fetching discovery and keys; 5s when zero.
	DiscoveryTimeout time.Duration
	// RefreshInterval is how often discovery and keys are fetched again; 10m when zero.
	RefreshInterval time.Duration
	// Now is the clock; time.Now when nil (tests move it).
	Now func() time.Time
}

// Step is one configured OIDC login step.
type Step struct {
	s        *settings
	log      zerolog.Logger
	client   *http.Client
	provider *provider
	store    Store
	flows    *sealer
	now      func() time.Time
	refresh  flight
}

// New builds the step for one oauth2.oidcAuthorizationCode config: it validates cfg,
// fetches the provider's discovery document and keys (an error rejects the config),
// and starts the background refresh, which stops when ctx is cancelled (the config
// was replaced).
func New(ctx context.Context, cfg *extauthv1.OidcAuthorizationCode, opts Options) (chain.Step, error) {
	s, err := newSettings(cfg)
	if err != nil {
		return nil, fmt.Errorf("step/oidc: %w", err)
	}
	st := &Step{s: s, log: opts.Log.With().Str("step", "oidc").Str("issuer", s.issuer).Logger(), client: opts.HTTPClient, now: opts.Now}
	if st.client == nil {
		st.client = &http.Client{Timeout: 10 * time.Second}
	}
	if st.now == nil {
		st.now = time.Now
	}
	timeout := orDefault(opts.DiscoveryTimeout, 5*time.Second)
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if st.provider, err = discover(dctx, s.issuer, st.client); err != nil {
		return nil, fmt.Errorf("step/oidc: provider %s: %w (is it up and reachable from extauth?)", s.issuer, err)
	}
	if !s.configuredKey {
		s.cookieKey = randomBytes(32)
		st.log.Warn().Msg("no cookie encryption key configured (session.cookieEncryptionKeyRef): generated one; " +
			"sessions and logins in progress will not survive a restart or span replicas")
	}
	if st.flows, err = newSealer(s.cookieKey, "flow"); err != nil {
		return nil, fmt.Errorf("step/oidc: cookie key: %w", err)
	}
	if st.store, err = st.newStore(ctx); err != nil {
		return nil, err
	}
	go st.provider.run(ctx, orDefault(opts.RefreshInterval, 10*time.Minute), timeout, func(err error) {
		st.log.Warn().Err(err).Msg("refreshing provider discovery and keys failed; keeping the last good ones")
	})
	go func() {
		<-ctx.Done()
		// Requests that started on this chain before it was replaced may still use
		// the store for a moment.
		time.Sleep(storeCloseGrace)
		st.store.Close()
	}()
	return st, nil
}

func (st *Step) newStore(ctx context.Context) (Store, error) {
	if len(st.s.redisAddrs) == 0 {
		return NewCookieStore(st.s.cookieKey, st.s.cookieName)
	}
	r := NewRedisStore(st.s.redisAddrs, time.Duration(st.s.cookie.maxAge)*time.Second)
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := r.Ping(pctx); err != nil {
		// Not fatal: Redis may come up later; until then failOnFetchFailure decides.
		st.log.Warn().Err(err).Strs("redis", st.s.redisAddrs).Msg("session store unreachable")
	} else if !r.clientCaching() {
		st.log.Warn().Strs("redis", st.s.redisAddrs).Msg("redis does not support client-side caching (RESP3, Redis 6+): every Check reads its session from redis")
	}
	return r, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Name implements chain.Step.
func (st *Step) Name() string { return "step/oidc" }

// Authorize implements chain.Step.
func (st *Step) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	path, _, _ := strings.Cut(req.Path, "?")
	switch {
	case path == st.s.callbackPath:
		return st.callback(ctx, req), nil
	case st.s.logoutPath != "" && path == st.s.logoutPath:
		return st.logout(ctx, req), nil
	}
	return st.session(ctx, req), nil
}

// oauth2Config is the client for one exchange with the current endpoints.
func (st *Step) oauth2Config() *oauth2.Config {
	m := st.provider.meta.Load()
	return &oauth2.Config{
		ClientID:     st.s.clientID,
		ClientSecret: st.s.clientSecret,
		RedirectURL:  st.s.redirectURL,
		Scopes:       st.s.scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:   m.AuthorizationEndpoint,
			TokenURL:  m.TokenEndpoint,
			AuthStyle: oauth2.AuthStyleInHeader,
		},
	}
}
