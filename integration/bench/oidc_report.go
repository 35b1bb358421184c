package main

import (
	"fmt"
	"strings"
	"time"
)

// oidcMarkdown renders the OIDC section: the part of BENCHMARKS.md between the
// bench:oidc markers.
func (r *report) oidcMarkdown() string {
	o := r.OIDC
	var b strings.Builder
	b.WriteString(r.measured(fmt.Sprintf(", oidc-provider %s, redis-server %s", o.Provider, o.Redis)))
	fmt.Fprintf(&b, "**Valid-session Checks under load.** The load of the plugin section (ghz, concurrency %d, %s per run, "+
		"%d round(s), alternating with the same bare server, %s deadline, medians over the rounds) against a second "+
		"gatehouse process serving two AuthConfigs with one `oauth2.oidcAuthorizationCode` step each, as in "+
		"`examples/oidc/authconfig.yaml`, with panva's oidc-provider (node) and redis-server on 127.0.0.1, both started "+
		"by `integration/harness`: **cookie** keeps the session in an encrypted cookie (%d bytes), **redis** keeps it in "+
		"Redis under the handle the cookie holds (%d bytes). Before the load the bench logs in once per mode as a browser "+
		"behind Envoy would: the Check of the page answers 302 to the provider, the provider's login and consent forms "+
		"are posted with a cookie jar, the Check of the callback answers 302 with the session cookie; then one Check with "+
		"that cookie must be allowed with the ID token in `x-id-token` and without the session cookie passed on. The "+
		"request under load is a page load of `%s` with nine headers and `cookie: <session>; theme=dark`; the bare "+
		"server gets the same requests. redis-server's and the provider's CPU come from /proc like the server's and are "+
		"divided by the same Checks.\n\n",
		r.Concurrency, r.Duration, r.Rounds, envoyTimeout, o.CookieBytes["cookie"], o.CookieBytes["redis"], protectedPath)
	b.WriteString(o.refreshNote())
	writeOthers(&b, o.Runs)

	sums := summarize(o.Runs, oidcModeNames())
	b.WriteString("| server | session | requests/s | p50 | p99 | CPU-µs/Check |")
	for _, c := range o.Companions {
		fmt.Fprintf(&b, " %s CPU-µs/Check |", c)
	}
	b.WriteString("\n|---|---|---:|---:|---:|---:|" + strings.Repeat("---:|", len(o.Companions)) + "\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %.1f |", s.Server, s.Path, s.RPS, ms(s.P50), ms(s.P99), micros(s.CPUPerCheck))
		for _, c := range s.Companions {
			fmt.Fprintf(&b, " %.1f |", micros(c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nNext to the plugin figures of the same run (each against the bare server loaded with the same request):\n\n")
	b.WriteString("| gatehouse runs | requests/s | p99 | CPU-µs/Check | with redis-server | CPU/Check ÷ bare | with redis-server ÷ bare | p99 ÷ bare |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := []struct {
		label, load string
		sums        []summary
	}{
		{"the required_header plugin (allow)", "allow", summarize(r.Runs, pathNames())},
		{"the OIDC step, cookie session", "cookie", sums},
		{"the OIDC step, Redis session", "redis", sums},
	}
	for _, row := range rows {
		bare, gh, ok := pair(row.sums, row.load)
		if !ok {
			continue
		}
		withRedis := gh.CPUPerCheck
		if len(gh.Companions) > 0 {
			withRedis += gh.Companions[0] // redis-server
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %.1f | %.1f | %.2f× | %.2f× | %.2f× |\n", row.label, gh.RPS, ms(gh.P99),
			micros(gh.CPUPerCheck), micros(withRedis), ratio(gh.CPUPerCheck, bare.CPUPerCheck), ratio(withRedis, bare.CPUPerCheck), ratio(gh.P99, bare.P99))
	}
	b.WriteString("\n")
	writeEveryRun(&b, o.Runs, "session", o.Companions)
	if len(o.GoBench) > 0 {
		fmt.Fprintf(&b, "**In process.** `go test -run '^$' -bench '%s' "+goBenchFlags+" %s` (medians): `Step.Authorize` with a valid session "+
			"against a fake provider (the cookie mode needs nothing else; the Redis mode a real redis-server), without "+
			"the chain or gRPC, and `SessionLoad`, a store's Load of a session it has seen (cookie; Redis without and "+
			"with the client-side cache).\n\n", oidcGoBench, oidcGoBenchPackage)
		b.WriteString("| benchmark | ns/op | B/op | allocs/op |\n|---|---:|---:|---:|\n")
		for _, g := range o.GoBench {
			fmt.Fprintf(&b, "| %s | %.0f | %d | %d |\n", g.Name, g.NsPerOp, g.BytesPerOp, g.AllocsPerOp)
		}
	}
	return b.String()
}

// refreshNote says whether a token refresh happened, or could have, during the load.
func (o *oidcResult) refreshNote() string {
	refreshAt := o.Expiry.Add(-o.PreExpiry)
	switch {
	case len(o.Refreshed) > 0:
		return fmt.Sprintf("**Sessions were refreshed during the load** (%s: after the load the Check carried another "+
			"ID token or set a cookie), so these figures include refreshes.\n\n", strings.Join(o.Refreshed, ", "))
	case !refreshAt.After(o.LoadEnd):
		return fmt.Sprintf("**A refresh was due during the load** (the first ID token expired at %s UTC, the step "+
			"refreshes %s before expiry, the load ended at %s UTC), so these figures may include one.\n\n",
			o.Expiry.UTC().Format(time.TimeOnly), o.PreExpiry, o.LoadEnd.UTC().Format(time.TimeOnly))
	}
	return fmt.Sprintf("**No refresh during the load.** The provider's tokens live an hour (provider.js's default; the "+
		"bench sets no ACCESS_TOKEN_TTL or ID_TOKEN_TTL) and the step refreshes %s (the preExpiryBuffer default) "+
		"before they expire: the first refresh was due %s after the load ended. After the load each mode's Check "+
		"still returned the ID token of the login and set no cookie.\n\n", o.PreExpiry, refreshAt.Sub(o.LoadEnd).Round(time.Minute))
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
