package integration_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
)

// pollReplica sends the Check of the page with cookie to r until done accepts the
// verdict (at most 5s) and returns how long that took. The delay is logged, not
// asserted: BENCHMARKS.md reports it under load.
func pollReplica(t *testing.T, r *extauthReplica, cookie, what string, done func(verdict) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		v := r.check(t, "/orders", cookie)
		if done(v) {
			d := time.Since(start)
			t.Logf("%s: %s after the change on the other replica returned", what, d)
			return d
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s: still %v 5s after the change on the other replica", what, v)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOIDCReplicasLogoutAcrossProcesses runs two gatehouse extauth processes on one
// Redis: a session made on A serves on B (from B's client-side cache once B has seen
// it: no GET reaches Redis), and a logout on A makes B refuse the session cookie.
func TestOIDCReplicasLogoutAcrossProcesses(t *testing.T) {
	provider := harness.StartProvider(t, harness.ProviderOptions{
		RedirectURIs: []string{replicaApp + "/callback"}, PostLogoutRedirectURIs: []string{replicaApp + "/"},
	})
	redis := harness.StartRedis(t)
	reps := startReplicas(t, 2, provider.Issuer, redis.Addr, 30*time.Second)
	a, b := reps[0], reps[1]

	handle := replicaLogin(t, a, provider.Issuer)
	cookie := "gh_handle=" + handle + "; theme=dark"
	onA := a.check(t, "/orders", cookie)
	if !onA.allowed || strings.Count(onA.headers["x-id-token"], ".") != 2 {
		t.Fatalf("A with its own session: %v", onA)
	}
	onB := b.check(t, "/orders", cookie)
	if !onB.allowed || onB.headers["x-id-token"] != onA.headers["x-id-token"] {
		t.Fatalf("B with the session made on A: %v; want allowed with the same ID token", onB)
	}
	gets := redis.CommandCalls(t, "get")
	for i := 0; i < 20; i++ {
		if v := b.check(t, "/orders", cookie); !v.allowed {
			t.Fatalf("B, Check #%d with the session: %v", i+2, v)
		}
	}
	if got := redis.CommandCalls(t, "get"); got != gets {
		t.Errorf("20 more Checks on B sent %d GETs to Redis; want 0 (served from B's cache)", got-gets)
	}

	out := a.check(t, "/logout", cookie)
	if out.status != http.StatusFound || !strings.HasPrefix(out.location, provider.Issuer+"/session/end?") {
		t.Fatalf("logout on A: %v, want 302 to the end-session endpoint", out)
	}
	pollReplica(t, b, cookie, "B refused the session logged out on A", func(v verdict) bool {
		return !v.allowed && v.status == http.StatusFound && strings.HasPrefix(v.location, provider.Issuer+"/")
	})
	if v := a.check(t, "/orders", cookie); v.allowed {
		t.Errorf("A after its own logout: %v", v)
	}
}

// TestOIDCReplicasRefreshAcrossProcesses: tokens refreshed on A are what B passes
// upstream next, without refreshing them again itself (B would then send a third
// access token, or fail on the spent refresh token).
func TestOIDCReplicasRefreshAcrossProcesses(t *testing.T) {
	// Tokens live 12s; the step refreshes them once fewer than 8s are left: B must
	// see the session within 4s of the login, and A's refreshed one within 4s of the
	// refresh, to pass it on without refreshing it itself.
	provider := harness.StartProvider(t, harness.ProviderOptions{
		RedirectURIs: []string{replicaApp + "/callback"}, AccessTokenTTL: 12 * time.Second, IDTokenTTL: 12 * time.Second,
	})
	redis := harness.StartRedis(t)
	reps := startReplicas(t, 2, provider.Issuer, redis.Addr, 8*time.Second)
	a, b := reps[0], reps[1]

	handle := replicaLogin(t, a, provider.Issuer)
	loggedIn := time.Now()
	cookie := "gh_handle=" + handle
	first := b.check(t, "/orders", cookie)
	if !first.allowed || first.headers["x-access-token"] == "" {
		t.Fatalf("B with the session made on A: %v", first)
	}
	time.Sleep(time.Until(loggedIn.Add(5 * time.Second)))
	refreshed := a.check(t, "/orders", cookie)
	if !refreshed.allowed || refreshed.headers["x-access-token"] == first.headers["x-access-token"] {
		t.Fatalf("A within the pre-expiry buffer: %v, want allowed with a refreshed access token", refreshed)
	}
	pollReplica(t, b, cookie, "B passed on the tokens refreshed on A", func(v verdict) bool {
		switch at := v.headers["x-access-token"]; {
		case !v.allowed:
			t.Fatalf("B after the refresh on A: %v", v)
		case at != first.headers["x-access-token"] && at != refreshed.headers["x-access-token"]:
			t.Fatal("B passed on an access token that is neither the first nor A's refreshed one: it refreshed on its own")
		}
		return v.headers["x-access-token"] == refreshed.headers["x-access-token"]
	})
}

// TestOIDCReplicasRefreshOnce: Checks on both replicas at once, in the pre-expiry
// window, spend the refresh token once: every Check is allowed, and every access token
// passed on is the first one or the one refreshed token, never two different new ones.
func TestOIDCReplicasRefreshOnce(t *testing.T) {
	provider := harness.StartProvider(t, harness.ProviderOptions{
		RedirectURIs: []string{replicaApp + "/callback"}, AccessTokenTTL: 12 * time.Second, IDTokenTTL: 12 * time.Second,
	})
	redis := harness.StartRedis(t)
	reps := startReplicas(t, 2, provider.Issuer, redis.Addr, 8*time.Second)

	handle := replicaLogin(t, reps[0], provider.Issuer)
	loggedIn := time.Now()
	cookie := "gh_handle=" + handle
	first := reps[1].check(t, "/orders", cookie)
	if !first.allowed || first.headers["x-access-token"] == "" {
		t.Fatalf("B with the session made on A: %v", first)
	}
	time.Sleep(time.Until(loggedIn.Add(5 * time.Second))) // 7s left: inside the 8s window

	const perReplica = 8
	type result struct {
		v   verdict
		err error
	}
	results := make(chan result, 2*perReplica)
	for _, r := range reps {
		for range perReplica {
			go func() {
				v, err := r.checkErr("/orders", cookie)
				results <- result{v, err}
			}()
		}
	}
	fresh := map[string]bool{}
	for range 2 * perReplica {
		res := <-results
		switch {
		case res.err != nil:
			t.Fatal(res.err)
		case !res.v.allowed:
			t.Fatalf("a Check in the refresh window: %v", res.v)
		}
		if at := res.v.headers["x-access-token"]; at != first.headers["x-access-token"] {
			fresh[at] = true
		}
	}
	if len(fresh) > 1 {
		t.Errorf("%d different refreshed access tokens passed on: the refresh token was spent %d times", len(fresh), len(fresh))
	}
}
