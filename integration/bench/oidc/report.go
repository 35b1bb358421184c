package oidc

import (
	"fmt"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// goals are CPU per Check of each mode with its companions' CPU, gatehouse ÷ bare.
func (o *result) goals() []benchkit.Goal {
	withCompanions := func(m checkload.Measurement) float64 {
		c := m.CPUPerCheck
		for _, x := range m.Companions {
			c += x
		}
		return float64(c)
	}
	var gs []benchkit.Goal
	for _, m := range []struct {
		mode   string
		target float64
	}{{"cookie", cookieTarget}, {"redis", redisTarget}} {
		if rs := checkload.Ratios(o.Runs, m.mode, "gatehouse", "bare", withCompanions); len(rs) > 0 {
			gs = append(gs, benchkit.Goal{What: "OIDC " + m.mode + " session: CPU per Check with " + strings.Join(o.Companions, " and ") + "'s, gatehouse ÷ bare",
				Target: m.target, Unit: "×", Rounds: rs})
		}
	}
	return gs
}

// markdown renders the section.
func (o *result) markdown(measured string, opt Options) string {
	var b strings.Builder
	b.WriteString(measured)
	benchkit.WriteGoals(&b, o.goals())
	fmt.Fprintf(&b, "Concurrency %d, %s per run, %d round(s); session cookies of %d bytes (cookie) and %d bytes (redis). ",
		opt.Concurrency, opt.Duration, opt.Rounds, o.CookieBytes["cookie"], o.CookieBytes["redis"])
	b.WriteString(o.refreshNote())
	checkload.WriteOthers(&b, o.Runs)
	checkload.WriteSummary(&b, checkload.Summarize(o.Runs, modeNames(), "bare", "gatehouse"), "session", o.Companions)
	var beside strings.Builder
	beside.WriteString("Beside the plugin figures of the same run (each against the bare server loaded with the same request):\n\n")
	beside.WriteString("| gatehouse runs | requests/s | p99 | CPU-µs/Check | with redis-server | CPU/Check ÷ bare | with redis-server ÷ bare | p99 ÷ bare |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := []struct {
		label, load string
		runs        []checkload.Measurement
	}{
		{"the required_header plugin (allow)", "allow", o.Plugin},
		{"the OIDC step, cookie session", "cookie", o.Runs},
		{"the OIDC step, Redis session", "redis", o.Runs},
	}
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	for _, row := range rows {
		sums := checkload.Summarize(row.runs, []string{row.load}, "bare", "gatehouse")
		if len(sums) != 2 {
			continue // a server without a run of the load
		}
		bare, gh := sums[0], sums[1]
		withRedis := gh.CPUPerCheck
		if len(gh.Companions) > 0 {
			withRedis += gh.Companions[0] // redis-server
		}
		fmt.Fprintf(&beside, "| %s | %.0f | %s | %.1f | %.1f | %.2f× | %.2f× | %.2f× |\n", row.label, gh.RPS, benchkit.Ms(gh.P99),
			benchkit.Micros(gh.CPUPerCheck), benchkit.Micros(withRedis), ratio(gh.CPUPerCheck, bare.CPUPerCheck),
			ratio(withRedis, bare.CPUPerCheck), ratio(gh.P99, bare.P99))
	}
	benchkit.Fold(&b, "Beside the plugin figures of the same run", beside.String())
	checkload.WriteEveryRun(&b, "Every run", o.Runs, "session", o.Companions)
	if len(o.GoBench) > 0 {
		fmt.Fprintf(&b, "<details><summary>In process: <code>go test -run '^$' -bench '%s' %s %s</code> (medians)</summary>\n\n", goBenchPattern, goBenchFlags, goBenchPackage)
		b.WriteString("| benchmark | ns/op | B/op | allocs/op |\n|---|---:|---:|---:|\n")
		for _, g := range o.GoBench {
			fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f |\n", g.Name, g.Metrics["ns/op"], g.Metrics["B/op"], g.Metrics["allocs/op"])
		}
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// refreshNote says whether a token refresh happened, or could have, during the load.
func (o *result) refreshNote() string {
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
	return fmt.Sprintf("**No refresh during the load.** The step refreshes %s before the tokens expire: the first "+
		"refresh was due %s after the load ended, and after the load each mode's Check still returned the ID token of "+
		"the login and set no cookie.\n\n", o.PreExpiry, refreshAt.Sub(o.LoadEnd).Round(time.Minute))
}
