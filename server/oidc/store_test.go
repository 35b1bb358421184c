package oidc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// storeCase is one store under the conformance suite.
type storeCase struct {
	name  string
	store oidc.Store
	// forgets is true when Clear makes the cookie value useless (server-side stores).
	forgets bool
	// raw returns what the store keeps for a cookie value, where it is not the cookie.
	raw func(t *testing.T, cookie string) string
}

// TestStoreConformance runs the same contract against every session store, as
// oauth2-proxy does for its stores.
func TestStoreConformance(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	cs, err := oidc.NewCookieStore(key, "sess")
	if err != nil {
		t.Fatal(err)
	}
	r := harness.StartRedis(t)
	rs := oidc.NewRedisStore([]string{r.Addr}, 0)
	t.Cleanup(func() { rs.Close() })
	cl := harness.StartRedisCluster(t, 3)
	// One node's address is enough: the client asks it for the others.
	rc := oidc.NewRedisStore(cl.Addrs()[:1], 0)
	t.Cleanup(func() { rc.Close() })
	for _, sc := range []storeCase{
		{name: "cookie", store: cs},
		{name: "redis", store: rs, forgets: true, raw: func(t *testing.T, cookie string) string {
			return bulk(t, r, "GET", oidc.RedisSessionKey(cookie))
		}},
		{name: "redis cluster", store: rc, forgets: true, raw: func(t *testing.T, cookie string) string {
			key := oidc.RedisSessionKey(cookie)
			return bulk(t, cl.NodeFor(t, key), "GET", key)
		}},
	} {
		t.Run(sc.name, func(t *testing.T) { storeSuite(t, sc) })
	}
}

func storeSuite(t *testing.T, sc storeCase) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	sess := &oidc.Session{IDToken: "id.token.value", AccessToken: "access-token-value", RefreshToken: "refresh-token-value", Expiry: now.Add(time.Hour), Created: now}

	t.Run("save then load", func(t *testing.T) {
		c, err := sc.store.Save(ctx, sess, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := sc.store.Load(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sess, got); diff != "" {
			t.Errorf("loaded session (-want +got):\n%s", diff)
		}
		if strings.Contains(c, "token-value") {
			t.Error("the cookie shows a token in clear")
		}
		if sc.raw != nil {
			switch raw := sc.raw(t, c); {
			case raw == "":
				t.Error("the store keeps nothing under the session's key")
			case strings.Contains(raw, "token-value"):
				t.Error("the store keeps a token in clear")
			}
		}
	})
	t.Run("two saves, two sessions", func(t *testing.T) {
		a, _ := sc.store.Save(ctx, sess, "")
		b, _ := sc.store.Save(ctx, sess, "")
		if a == b {
			t.Error("two logins got the same cookie value")
		}
	})
	t.Run("unknown and tampered values", func(t *testing.T) {
		c, _ := sc.store.Save(ctx, sess, "")
		// Loaded first: a store that remembers what it opened (the cookie store's
		// memo) must not take a value that differs from it for it.
		if _, err := sc.store.Load(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Each tampered value differs from c: replacing a character by a fixed one left
		// c unchanged when it already was that character (1 run in 64 failed).
		for _, bad := range []string{"", "x", strings.Repeat("A", 43), c[:len(c)-2] + other(c[len(c)-2]) + other(c[len(c)-1]), other(c[0]) + c[1:], c + "A"} {
			if _, err := sc.store.Load(ctx, bad); !errors.Is(err, oidc.ErrNoSession) {
				t.Errorf("Load(%.10q…) = %v, want ErrNoSession", bad, err)
			}
		}
	})
	t.Run("refresh replaces the session", func(t *testing.T) {
		c, _ := sc.store.Save(ctx, sess, "")
		next := *sess
		next.AccessToken = "access-token-2"
		c2, err := sc.store.Save(ctx, &next, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sc.store.Load(ctx, c2)
		if err != nil || got.AccessToken != "access-token-2" {
			t.Fatalf("after refresh: %+v, %v", got, err)
		}
		if sc.forgets && c2 != c {
			t.Error("a server-side store changed the handle on refresh; the browser's cookie would go stale")
		}
	})
	t.Run("clear", func(t *testing.T) {
		c, _ := sc.store.Save(ctx, sess, "")
		if err := sc.store.Clear(ctx, c); err != nil {
			t.Fatal(err)
		}
		_, err := sc.store.Load(ctx, c)
		if sc.forgets && !errors.Is(err, oidc.ErrNoSession) {
			t.Errorf("Load after Clear = %v, want ErrNoSession", err)
		}
		if err := sc.store.Clear(ctx, "never-issued"); err != nil {
			t.Errorf("Clear of an unknown value: %v", err)
		}
	})
	t.Run("first use", func(t *testing.T) {
		key := "state-" + sc.name + time.Now().String()
		for i, want := range []bool{true, false, false} {
			got, err := sc.store.FirstUse(ctx, key, time.Minute)
			if err != nil || got != want {
				t.Errorf("FirstUse #%d = %v, %v; want %v", i+1, got, err, want)
			}
		}
		if got, _ := sc.store.FirstUse(ctx, key+"-other", time.Minute); !got {
			t.Error("FirstUse of another key = false")
		}
	})
}

// TestRedisStoreUnreachable: a store that cannot be asked is not "no session".
func TestRedisStoreUnreachable(t *testing.T) {
	rs := oidc.NewRedisStore([]string{"127.0.0.1:" + itoa(harness.FreePort(t))}, 0)
	defer rs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := rs.Load(ctx, strings.Repeat("A", 43))
	if err == nil || errors.Is(err, oidc.ErrNoSession) {
		t.Errorf("Load with Redis down = %v; want a store error, not ErrNoSession", err)
	}
	if _, err := rs.FirstUse(ctx, "k", time.Minute); err == nil {
		t.Error("FirstUse with Redis down succeeded")
	}
}

func bulk(t *testing.T, r *harness.Redis, args ...string) string {
	t.Helper()
	v, err := r.Bulk(args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// other is a base64url character other than ch.
func other(ch byte) string {
	if ch == 'A' {
		return "B"
	}
	return "A"
}
