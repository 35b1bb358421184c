package oidc_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// BenchmarkSessionLoad is the session lookup of one Check with a valid session: the
// cookie store (AES-GCM open and JSON decode of the cookie), Redis without the
// client-side cache (one GET round trip and the decode, as before), and Redis with it.
func BenchmarkSessionLoad(b *testing.B) {
	ctx := context.Background()
	now := time.Now().UTC()
	sess := &oidc.Session{IDToken: strings.Repeat("i", 700), AccessToken: strings.Repeat("a", 40), RefreshToken: strings.Repeat("r", 40),
		Expiry: now.Add(time.Hour), Created: now}
	cs, err := oidc.NewCookieStore([]byte("0123456789abcdef0123456789abcdef"), "sess")
	if err != nil {
		b.Fatal(err)
	}
	r := harness.StartRedis(b)
	for _, tc := range []struct {
		name  string
		store func() oidc.Store
	}{
		{"cookie", func() oidc.Store { return cs }},
		{"redis without client cache", func() oidc.Store { return oidc.NewRedisStoreWithoutCache([]string{r.Addr}, 0) }},
		{"redis with client cache", func() oidc.Store { return oidc.NewRedisStore([]string{r.Addr}, 0) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			store := tc.store()
			defer store.Close()
			c, err := store.Save(ctx, sess, "")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.Load(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRedisLogoutReachesReplica is how long after a logout starts on replica A
// (Clear, a DEL) replica B, which had the session in its client-side cache, refuses
// it. One op is one logout; p50 and p99 of the delays are reported. Both replicas
// are stores with their own connections in this process, on one redis-server.
func BenchmarkRedisLogoutReachesReplica(b *testing.B) {
	ctx := context.Background()
	r := harness.StartRedis(b)
	a, rb := oidc.NewRedisStore([]string{r.Addr}, 0), oidc.NewRedisStore([]string{r.Addr}, 0)
	defer a.Close()
	defer rb.Close()
	now := time.Now().UTC()
	sess := &oidc.Session{IDToken: "id", AccessToken: "access", Expiry: now.Add(time.Hour), Created: now}
	var delays, cleared []time.Duration
	for b.Loop() {
		b.StopTimer()
		h, err := a.Save(ctx, sess, "")
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the second Load is served from B's cache
			if _, err := rb.Load(ctx, h); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		if err := a.Clear(ctx, h); err != nil {
			b.Fatal(err)
		}
		cleared = append(cleared, time.Since(start))
		for {
			_, err := rb.Load(ctx, h)
			if errors.Is(err, oidc.ErrNoSession) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if time.Since(start) > 5*time.Second {
				b.Fatal("B still serves the session 5s after the logout on A")
			}
			time.Sleep(20 * time.Microsecond) // leave the CPU to the clients' readers
		}
		delays = append(delays, time.Since(start))
	}
	slices.Sort(delays)
	slices.Sort(cleared)
	b.ReportMetric(float64(cleared[len(cleared)/2].Microseconds()), "clear-p50-µs")
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds()), "p99-µs")
}
