package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// oidcResult is what the OIDC phase found.
type oidcResult struct {
	Runs       []measurement
	Companions []string // names, in the order of measurement.Companions
	Provider   string   // oidc-provider's version
	Redis      string   // redis-server's version
	// CookieBytes is the length of each mode's session cookie (name=value).
	CookieBytes map[string]int
	// Expiry is when the first of the sessions' ID tokens expires; the step refreshes
	// PreExpiry before that.
	Expiry    time.Time
	PreExpiry time.Duration
	LoadEnd   time.Time
	// Refreshed are the modes whose Check after the load carried another ID token or
	// set a cookie: their session was refreshed during the load.
	Refreshed []string
	GoBench   []goBench
}

// runOIDC starts the OpenID provider and redis-server (through integration/harness)
// and gatehouse with an OIDC AuthConfig per session mode, logs in once per mode, and
// loads gatehouse and the bare server alternately with each mode's Check.
func runOIDC(ctx context.Context, root, dir string, bins binaries, procs *procSet, l *loader, bare *server, rounds int, profile string) (*oidcResult, error) {
	tb := &harnessTB{dir: dir}
	defer tb.cleanup()
	var provider *harness.Provider
	var redis *harness.Redis
	progress("starting the OpenID provider and redis-server")
	if err := tb.do(func() {
		provider = harness.StartProvider(tb, harness.ProviderOptions{RedirectURIs: []string{appOrigin + callbackPath}})
		redis = harness.StartRedis(tb)
	}); err != nil {
		return nil, err
	}
	res := &oidcResult{CookieBytes: map[string]int{}, PreExpiry: oidc.DefaultPreExpiryBuffer}
	var err error
	if res.Provider, res.Redis, err = oidcVersions(ctx, root); err != nil {
		return nil, err
	}
	// Both are children of this process: the harness started them.
	var companions []companion
	for _, c := range []struct{ name, comm string }{{"redis-server", "redis-server"}, {"oidc-provider", "node"}} {
		pid, err := childNamed(c.comm)
		if err != nil {
			return nil, err
		}
		// On the server's CPU, beside the server they serve, away from ghz.
		if canPin() {
			if err := setAffinity(ctx, pid, serverCPU); err != nil {
				return nil, err
			}
		}
		companions = append(companions, companion{name: c.name, pid: pid})
		res.Companions = append(res.Companions, c.name)
	}

	gh, err := startOIDCGatehouse(ctx, procs, bins, dir, provider.Issuer, redis.Addr, profile != "")
	if err != nil {
		return nil, err
	}
	defer procs.stop(gh.proc)
	conn, err := grpc.NewClient(gh.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)

	reqs := map[string]*authv3.CheckRequest{}
	tokens := map[string]string{}
	for _, m := range oidcModes {
		progress("logging in through the " + m.name + " session AuthConfig")
		session, err := login(ctx, tb, client, m, provider.Issuer)
		if err != nil {
			return nil, err
		}
		res.CookieBytes[m.name] = len(session)
		reqs[m.name] = sessionRequest(m, session)
		var refreshed bool
		if tokens[m.name], refreshed, err = checkSession(ctx, client, reqs[m.name]); err != nil || refreshed {
			return nil, fmt.Errorf("%s: Check with a new session cookie: set-cookie %v, %v", m.name, refreshed, err)
		}
		exp, err := tokenExpiry(tokens[m.name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		if res.Expiry.IsZero() || exp.Before(res.Expiry) {
			res.Expiry = exp
		}
		if l.data[m.name], err = writeCheckRequest(dir, m.name, reqs[m.name]); err != nil {
			return nil, err
		}
	}
	ph := phase{servers: servers{bare: bare, gatehouse: gh}, loads: oidcModeNames(), companions: companions}
	if res.Runs, err = l.measure(ctx, ph, rounds); err != nil {
		return nil, err
	}
	res.LoadEnd = time.Now()
	if profile != "" {
		progress("profiling gatehouse under cookie-session load")
		if err := l.profile(ctx, gh, "cookie", profile); err != nil {
			return nil, err
		}
	}
	for _, m := range oidcModes {
		tok, setCookie, err := checkSession(ctx, client, reqs[m.name])
		if err != nil {
			return nil, fmt.Errorf("%s: Check with the session cookie after the load: %w", m.name, err)
		}
		if setCookie || tok != tokens[m.name] {
			res.Refreshed = append(res.Refreshed, m.name)
		}
	}
	return res, nil
}

// startOIDCGatehouse starts `gatehouse extauth` on the OIDC resources and waits until
// both AuthConfigs answer a Check without a session with the redirect to the provider.
func startOIDCGatehouse(ctx context.Context, procs *procSet, bins binaries, dir, issuer, redisAddr string, admin bool) (*server, error) {
	cfg, err := writeOIDCConfig(dir, issuer, redisAddr)
	if err != nil {
		return nil, err
	}
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	empty := filepath.Join(dir, "no-plugins")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return nil, err
	}
	gh := &server{name: "gatehouse", addr: addrs[0]}
	extauthArgs := []string{"extauth", "--config", cfg, "--plugin-dir", empty, "--listen", gh.addr}
	if admin {
		gh.admin = addrs[1]
		extauthArgs = append(extauthArgs, "--admin-listen", gh.admin)
	}
	bin, args := pinned(serverCPU, bins.gatehouse, extauthArgs...)
	if gh.proc, err = procs.start("gatehouse (OIDC)", filepath.Join(dir, "gatehouse-oidc.log"), serverEnv(), bin, args...); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(gh.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	err = waitUntil(ctx, gh, func(ctx context.Context) error {
		for _, m := range oidcModes {
			page, _ := url.Parse(appOrigin + protectedPath)
			jar, _ := cookiejar.New(nil)
			if _, err := redirect(ctx, client, m, jar, page); err != nil {
				return fmt.Errorf("%s: %w", m.configID, err)
			}
		}
		return nil
	})
	return gh, err
}

// tokenExpiry reads the exp claim of a JWT without verifying it (gatehouse did).
func tokenExpiry(jwt string) (time.Time, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return time.Time{}, errors.New("ID token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, fmt.Errorf("ID token payload: %w", err)
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == 0 {
		return time.Time{}, fmt.Errorf("ID token payload has no exp claim")
	}
	return time.Unix(claims.Exp, 0), nil
}

// oidcVersions are the versions of oidc-provider (from its package.json) and
// redis-server (from --version).
func oidcVersions(ctx context.Context, root string) (provider, redis string, err error) {
	b, err := os.ReadFile(filepath.Join(root, "integration", "oidcprovider", "node_modules", "oidc-provider", "package.json"))
	if err != nil {
		return "", "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", "", fmt.Errorf("oidc-provider package.json: %w", err)
	}
	out, err := output(ctx, "", "redis-server", "--version")
	if err != nil {
		return "", "", err
	}
	redis = "(unknown version)"
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			redis = v
		}
	}
	return pkg.Version, redis, nil
}
