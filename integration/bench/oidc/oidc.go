// Package oidc is the OIDC section of `make bench`: Checks with a valid session, kept
// in a cookie or in Redis, against the bare server, with the OpenID provider and
// redis-server of integration/harness.
package oidc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/harness"
	gateoidc "gatehouse.dev/gatehouse/server/oidc"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "oidc", Heading: "## OIDC login step: Checks with a valid session\n\n"}

// Goals of issue 13: CPU per Check with a valid session, gatehouse ÷ bare.
const (
	cookieTarget = 1.2 // cookie session
	redisTarget  = 1.3 // Redis session, redis-server's CPU included
)

// The in-process benchmarks: Authorize with a valid session, and the session stores'
// Load alone (cookie; Redis without and with the client-side cache).
const (
	goBenchPattern = "BenchmarkAuthorizeValidSession|BenchmarkSessionLoad"
	goBenchPackage = "./server/oidc"
	goBenchFlags   = "-benchmem -count 5 -cpu 1"
)

// Options are the section's flags.
type Options struct {
	checkload.Options
	GoBench bool
	Profile string // a CPU profile of gatehouse under cookie-session load, when set
}

// result is what the section found.
type result struct {
	Runs, Plugin []checkload.Measurement // Plugin: the plugin section's, when it ran
	Companions   []string                // names, in the order of Measurement.Companions
	CookieBytes  map[string]int          // each mode's session cookie (name=value)
	// Expiry is when the first of the sessions' ID tokens expires; the step refreshes
	// PreExpiry before that.
	Expiry    time.Time
	PreExpiry time.Duration
	LoadEnd   time.Time
	// Refreshed are the modes whose Check after the load carried another ID token or
	// set a cookie: their session was refreshed during the load.
	Refreshed []string
	GoBench   []benchkit.GoBench
}

// CheckDeps fails at once, before anything is built or loaded, when the parts the
// section runs are missing, and says what installs them.
func CheckDeps(root string) error {
	var missing []string
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing = append(missing, "redis-server")
	}
	if _, err := os.Stat(filepath.Join(root, "integration", "oidcprovider", "node_modules", "oidc-provider", "package.json")); err != nil {
		missing = append(missing, "the OpenID provider (integration/oidcprovider/node_modules)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the OIDC benchmark needs %s: run `make deps` (or skip it with -oidc=false)", strings.Join(missing, " and "))
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("the OIDC benchmark needs node to run the OpenID provider: apt-get install -y nodejs (or skip it with -oidc=false)")
	}
	return nil
}

// Run starts the provider, redis-server, a bare server and gatehouse with an OIDC
// AuthConfig per session mode, logs in once per mode, and loads gatehouse and the bare
// server alternately with each mode's Check. plugin are the plugin section's runs of
// the same run, shown beside, or nil.
func Run(ctx context.Context, env *benchkit.Env, o Options, plugin []checkload.Measurement) (benchkit.Result, error) {
	res := &result{Plugin: plugin, CookieBytes: map[string]int{}, PreExpiry: gateoidc.DefaultPreExpiryBuffer}
	var err error
	if o.GoBench {
		benchkit.Progress("running the Go benchmark %s in server/oidc", goBenchPattern)
		if res.GoBench, err = benchkit.RunGoBench(ctx, env.Root, goBenchPattern, goBenchFlags, goBenchPackage); err != nil {
			return benchkit.Result{}, err
		}
	}
	tb := &harnessTB{dir: env.Tmp}
	defer tb.cleanup()
	var provider *harness.Provider
	var redis *harness.Redis
	benchkit.Progress("starting the OpenID provider and redis-server")
	if err := tb.do(func() {
		provider = harness.StartProvider(tb, harness.ProviderOptions{RedirectURIs: []string{appOrigin + callbackPath}})
		redis = harness.StartRedis(tb)
	}); err != nil {
		return benchkit.Result{}, err
	}
	versions, err := versions(ctx, env.Root)
	if err != nil {
		return benchkit.Result{}, err
	}
	// Both are children of this process (the harness started them); on the server's
	// CPU, beside the server they serve, away from ghz.
	var companions []checkload.Companion
	for _, c := range []struct{ name, comm string }{{"redis-server", "redis-server"}, {"oidc-provider", "node"}} {
		pid, err := benchkit.ChildNamed(c.comm)
		if err != nil {
			return benchkit.Result{}, err
		}
		if benchkit.CanPin() {
			if err := benchkit.SetAffinity(ctx, pid, benchkit.ServerCPU); err != nil {
				return benchkit.Result{}, err
			}
		}
		companions = append(companions, checkload.Companion{Name: c.name, Pid: pid})
		res.Companions = append(res.Companions, c.name)
	}
	started, stop, err := checkload.StartChains(ctx, env, env.Tmp, checkload.Chain{Bare: true})
	defer stop()
	if err != nil {
		return benchkit.Result{}, err
	}
	bare := started[0]
	cfg, err := writeOIDCConfig(env.Tmp, provider.Issuer, redis.Addr)
	if err != nil {
		return benchkit.Result{}, err
	}
	gh, err := checkload.StartExtauth(env, "gatehouse", filepath.Join(env.Tmp, "gatehouse-oidc.log"), o.Profile != "", nil,
		"--config", cfg, "--plugin-dir", filepath.Join(env.Tmp, "no-plugins"))
	if err != nil {
		return benchkit.Result{}, err
	}
	defer env.Procs.Stop(gh.Proc)
	conn, err := grpc.NewClient(gh.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return benchkit.Result{}, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	if err := checkload.WaitUntil(ctx, gh, func(ctx context.Context) error { return redirects(ctx, client) }); err != nil {
		return benchkit.Result{}, err
	}
	l, err := checkload.NewLoader(ctx, env, env.Tmp, o.Options)
	if err != nil {
		return benchkit.Result{}, err
	}
	reqs, tokens := map[string]*authv3.CheckRequest{}, map[string]string{}
	for _, m := range modes {
		benchkit.Progress("logging in through the %s session AuthConfig", m.name)
		session, err := login(ctx, tb, client, m, provider.Issuer)
		if err != nil {
			return benchkit.Result{}, err
		}
		res.CookieBytes[m.name] = len(session)
		reqs[m.name] = sessionRequest(m, session)
		var refreshed bool
		if tokens[m.name], refreshed, err = checkSession(ctx, client, reqs[m.name]); err != nil || refreshed {
			return benchkit.Result{}, fmt.Errorf("%s: Check with a new session cookie: set-cookie %v, %v", m.name, refreshed, err)
		}
		exp, err := tokenExpiry(tokens[m.name])
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("%s: %w", m.name, err)
		}
		if res.Expiry.IsZero() || exp.Before(res.Expiry) {
			res.Expiry = exp
		}
		if err := l.SetRequest(m.name, reqs[m.name]); err != nil {
			return benchkit.Result{}, err
		}
	}
	ph := checkload.Phase{Base: bare, Server: gh, Loads: modeNames(), Companions: companions}
	if res.Runs, err = l.Measure(ctx, ph, 0, o.Rounds); err != nil {
		return benchkit.Result{}, err
	}
	res.LoadEnd = time.Now()
	profile, err := l.Profile(ctx, gh, "cookie", "cookie-session", o.Profile)
	if err != nil {
		return benchkit.Result{}, err
	}
	for _, m := range modes {
		tok, setCookie, err := checkSession(ctx, client, reqs[m.name])
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("%s: Check with the session cookie after the load: %w", m.name, err)
		}
		if setCookie || tok != tokens[m.name] {
			res.Refreshed = append(res.Refreshed, m.name)
		}
	}
	measured, err := env.MeasuredGhz(ctx, versions)
	r := env.Result(Section, res.goals(), res.markdown(measured, o))
	r.Profile = profile
	return r, err
}

// redirects checks that both AuthConfigs answer a Check without a session with the
// redirect to the provider.
func redirects(ctx context.Context, client authv3.AuthorizationClient) error {
	for _, m := range modes {
		page, _ := url.Parse(appOrigin + protectedPath)
		jar, _ := cookiejar.New(nil)
		if _, err := redirect(ctx, client, m, jar, page); err != nil {
			return fmt.Errorf("%s: %w", m.configID, err)
		}
	}
	return nil
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

// versions names the versions of oidc-provider (from its package.json) and
// redis-server, for the line that opens the section.
func versions(ctx context.Context, root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "integration", "oidcprovider", "node_modules", "oidc-provider", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("oidc-provider package.json: %w", err)
	}
	out, err := benchkit.Output(ctx, "", "redis-server", "--version")
	if err != nil {
		return "", err
	}
	redis := "(unknown version)"
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			redis = v
		}
	}
	return fmt.Sprintf(", oidc-provider %s, redis-server %s", pkg.Version, redis), nil
}
