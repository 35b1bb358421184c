package integration_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
)

// BenchmarkOIDCReplicaLogout measures, with two gatehouse extauth processes on one
// redis-server and the real provider, how long after the logout Check is sent to
// replica A replica B — which served the session from its client-side cache just
// before — answers the same session cookie with a redirect to the login. One op is
// one logout (each after a login of its own, untimed); B is polled with Checks back
// to back, so the figure includes one Check's round trip of resolution. Reported:
// p50-ms and p99-ms of that delay, and logout-p50-ms, how long A's logout Check
// itself took (it deletes the session, then revokes the tokens at the provider).
//
//	go test -run '^$' -bench BenchmarkOIDCReplicaLogout -benchtime 25x ./integration/
func BenchmarkOIDCReplicaLogout(b *testing.B) {
	provider := harness.StartProvider(b, harness.ProviderOptions{
		RedirectURIs: []string{replicaApp + "/callback"}, PostLogoutRedirectURIs: []string{replicaApp + "/"},
	})
	redis := harness.StartRedis(b)
	reps := startReplicas(b, 2, provider.Issuer, redis.Addr, 30*time.Second)
	a, rb := reps[0], reps[1]
	var delays, logouts []time.Duration
	for b.Loop() {
		b.StopTimer()
		cookie := "gh_handle=" + replicaLogin(b, a, provider.Issuer)
		for i := 0; i < 2; i++ {
			if v := rb.check(b, "/orders", cookie); !v.allowed {
				b.Fatalf("B with the session made on A: %v", v)
			}
		}
		b.StartTimer()
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			out, err := a.checkErr("/logout", cookie)
			if err == nil && out.status != http.StatusFound {
				err = fmt.Errorf("logout on A: %v, want 302", out)
			}
			done <- err
		}()
		for {
			v := rb.check(b, "/orders", cookie)
			if !v.allowed && v.status == http.StatusFound && strings.HasPrefix(v.location, provider.Issuer+"/") {
				break
			}
			if !v.allowed || time.Since(start) > 5*time.Second {
				b.Fatalf("B after the logout on A: %v after %s", v, time.Since(start))
			}
		}
		delays = append(delays, time.Since(start))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		logouts = append(logouts, time.Since(start))
	}
	ms := func(d []time.Duration, q int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*q/100].Microseconds()) / 1000
	}
	b.ReportMetric(ms(delays, 50), "p50-ms")
	b.ReportMetric(ms(delays, 99), "p99-ms")
	b.ReportMetric(ms(logouts, 50), "logout-p50-ms")
}
