package oidc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// redisBackend is a Redis that two stores (two replicas) share.
type redisBackend struct {
	name  string
	addrs []string
	// node is the server that holds key.
	node func(t *testing.T, key string) *harness.Redis
}

func redisBackends(t *testing.T) []redisBackend {
	r := harness.StartRedis(t)
	cl := harness.StartRedisCluster(t, 3)
	return []redisBackend{
		{name: "redis", addrs: []string{r.Addr}, node: func(*testing.T, string) *harness.Redis { return r }},
		{name: "redis cluster", addrs: cl.Addrs(), node: func(t *testing.T, key string) *harness.Redis { return cl.NodeFor(t, key) }},
	}
}

func newReplica(t *testing.T, addrs []string) *oidc.RedisStore {
	t.Helper()
	s := oidc.NewRedisStore(addrs, 0)
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("store on %v: %v", addrs, err)
	}
	return s
}

// eventually polls load until done says so, for up to 5s, and returns how long it took.
func eventually(t *testing.T, what string, load func() (*oidc.Session, error), done func(*oidc.Session, error) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		s, err := load()
		if done(s, err) {
			return time.Since(start)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s: still %+v, %v after 5s", what, s, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRedisClientCacheAcrossReplicas: replica B serves a session it has seen from
// memory (no GET reaches Redis), and a refresh or logout on replica A reaches B.
func TestRedisClientCacheAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	for _, be := range redisBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			a, b := newReplica(t, be.addrs), newReplica(t, be.addrs)
			sess := &oidc.Session{IDToken: "id", AccessToken: "access-1", RefreshToken: "refresh", Expiry: now.Add(time.Hour), Created: now}
			h, err := a.Save(ctx, sess, "")
			if err != nil {
				t.Fatal(err)
			}
			node := be.node(t, oidc.RedisSessionKey(h))
			load := func() (*oidc.Session, error) { return b.Load(ctx, h) }
			if s, err := load(); err != nil || s.AccessToken != "access-1" {
				t.Fatalf("B's first Load: %+v, %v", s, err)
			}
			if list := bulk(t, node, "CLIENT", "LIST"); !trackingClient(list) {
				t.Errorf("CLIENT LIST shows no name=gatehouse-oidc connection with tracking on (flag t):\n%s", list)
			}
			gets := node.CommandCalls(t, "get")
			loads, hits := b.CacheStats()
			for i := 0; i < 100; i++ {
				if s, err := load(); err != nil || s.AccessToken != "access-1" {
					t.Fatalf("B's Load #%d: %+v, %v", i+2, s, err)
				}
			}
			if got := node.CommandCalls(t, "get"); got != gets {
				t.Errorf("100 more Loads on B sent %d GETs to Redis; want 0 (served from B's cache)", got-gets)
			}
			if l, h := b.CacheStats(); l-loads != 100 || h-hits != 100 {
				t.Errorf("cache stats after 100 Loads: %d loads, %d hits more; want 100, 100", l-loads, h-hits)
			}

			next := *sess
			next.AccessToken = "access-2"
			if _, err := a.Save(ctx, &next, h); err != nil {
				t.Fatal(err)
			}
			d := eventually(t, "refresh on A, Load on B", load, func(s *oidc.Session, err error) bool { return err == nil && s.AccessToken == "access-2" })
			t.Logf("B served the refreshed session %s after A's Save returned", d)
			if s, err := a.Load(ctx, h); err != nil || s.AccessToken != "access-2" {
				t.Errorf("A right after its own Save: %+v, %v", s, err)
			}

			if err := a.Clear(ctx, h); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Load(ctx, h); !errors.Is(err, oidc.ErrNoSession) {
				t.Errorf("A right after its own Clear: %v, want ErrNoSession", err)
			}
			d = eventually(t, "logout on A, Load on B", load, func(_ *oidc.Session, err error) bool { return errors.Is(err, oidc.ErrNoSession) })
			t.Logf("B refused the logged-out session %s after A's Clear returned", d)
		})
	}
}

// TestRedisClientCacheConnectionLoss: a replica whose connection to Redis breaks
// drops what it cached through it. Here the session changes while B is disconnected,
// so no invalidation can reach B; B must read the new value well before the
// client-side TTL (10s) would have expired the old one.
func TestRedisClientCacheConnectionLoss(t *testing.T) {
	ctx := context.Background()
	r := harness.StartRedis(t)
	a, b := newReplica(t, []string{r.Addr}), newReplica(t, []string{r.Addr})
	now := time.Now().UTC().Truncate(time.Second)
	h, err := a.Save(ctx, &oidc.Session{IDToken: "id", AccessToken: "before", Expiry: now.Add(time.Hour), Created: now}, "")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := b.Load(ctx, h); err != nil || s.AccessToken != "before" {
		t.Fatalf("B's first Load: %+v, %v", s, err)
	}
	// Kill every connection of the stores; then write the new value from a store that
	// connects afresh: B, disconnected, is told nothing about the write.
	if got, err := r.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil || got == ":0" {
		t.Fatalf("CLIENT KILL: %q, %v", got, err)
	}
	c := newReplica(t, []string{r.Addr})
	if _, err := c.Save(ctx, &oidc.Session{IDToken: "id", AccessToken: "after", Expiry: now.Add(time.Hour), Created: now}, h); err != nil {
		t.Fatal(err)
	}
	d := eventually(t, "B after losing its connection", func() (*oidc.Session, error) { return b.Load(ctx, h) },
		func(s *oidc.Session, err error) bool { return err == nil && s.AccessToken == "after" })
	t.Logf("B read the value written while it was disconnected %s after the write", d)
}

// TestRedisClientCacheRedisDown: with Redis gone, a cached session is not served on:
// Load fails with a store error (failOnFetchFailure decides), never ErrNoSession.
func TestRedisClientCacheRedisDown(t *testing.T) {
	ctx := context.Background()
	r := harness.StartRedis(t)
	b := newReplica(t, []string{r.Addr})
	now := time.Now().UTC().Truncate(time.Second)
	h, err := b.Save(ctx, &oidc.Session{IDToken: "id", Expiry: now.Add(time.Hour), Created: now}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(ctx, h); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	load := func() (*oidc.Session, error) {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return b.Load(lctx, h)
	}
	d := eventually(t, "Load with Redis stopped", load, func(_ *oidc.Session, err error) bool { return err != nil })
	t.Logf("the first Load that failed came %s after redis-server exited", d)
	for i := 0; i < 5; i++ {
		if s, err := load(); err == nil || errors.Is(err, oidc.ErrNoSession) {
			t.Fatalf("Load #%d with Redis down: %+v, %v; want a store error", i+1, s, err)
		}
	}
}

// trackingClient reports whether a CLIENT LIST has a connection of the step with
// tracking on, as docs/operating.md tells operators to look for.
func trackingClient(list string) bool {
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name=gatehouse-oidc ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "t") {
				return true
			}
		}
	}
	return false
}
