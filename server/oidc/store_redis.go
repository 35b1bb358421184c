package oidc

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// RedisKeyPrefix starts every key the step writes.
const RedisKeyPrefix = "gatehouse:oidc:"

// RedisStore keeps sessions in Redis (or a Redis Cluster) under a key derived from a
// random handle; the cookie holds only the handle. The stored value is sealed with a
// key derived from the handle too, so neither a Redis dump nor a key name is enough to
// use a session, and replicas need no shared secret to read each other's sessions.
//
// Loads are served from a client-side cache that Redis keeps current (see
// redis_conn.go): a Check with a session this replica has seen costs no round trip,
// and a logout or refresh on any replica reaches this one's cache as soon as Redis
// has applied it. A lost connection takes its cached sessions with it, and while
// Redis cannot be reached Load fails as it did without a cache.
type RedisStore struct {
	conn   *redisConn
	maxAge time.Duration
	memo   *sessionMemo
	hits   atomic.Int64
	loads  atomic.Int64
}

// NewRedisStore connects in the background to addrs (one address of a single Redis or
// of a Cluster node, or several Cluster nodes). maxAge is the session cookie max age
// (0: none configured).
func NewRedisStore(addrs []string, maxAge time.Duration) *RedisStore {
	return newRedisStore(addrs, maxAge, true)
}

// newRedisStore without cache is a store with no client-side cache and no memo: every
// Load is a GET and a decode. Only tests build one, to compare with the cached store.
func newRedisStore(addrs []string, maxAge time.Duration, cache bool) *RedisStore {
	r := &RedisStore{conn: newRedisConn(addrs, cache), maxAge: maxAge}
	if cache {
		r.memo = newSessionMemo(memoEntries)
	}
	return r
}

// RedisSessionKey is the Redis key of the session a cookie handle names.
func RedisSessionKey(handle string) string {
	return RedisKeyPrefix + "session:" + hex.EncodeToString(digest("key", handle))
}

func handleSealer(handle string) (*sealer, error) { return newSealer([]byte(handle), "redis") }

// Save implements Store. A refresh keeps the handle, so the browser's cookie stays valid.
func (r *RedisStore) Save(ctx context.Context, s *Session, old string) (string, error) {
	handle := old
	if handle == "" {
		handle = randomString(32)
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	sl, err := handleSealer(handle)
	if err != nil {
		return "", err
	}
	key, sealed := RedisSessionKey(handle), sl.seal(plain, "session")
	ctx, end := redisSpan(ctx, "SET")
	err = r.write(ctx, func(b rueidis.Builder) rueidis.Completed {
		return b.Set().Key(key).Value(sealed).Px(sessionTTL(s, r.maxAge, time.Now())).Build()
	}, key)
	end(err)
	if err != nil {
		return "", storeFailed("save", fmt.Errorf("step/oidc: redis: save session: %w", err))
	}
	return handle, nil
}

// Load implements Store. The session returned is shared with other Checks: callers
// must not modify it.
func (r *RedisStore) Load(ctx context.Context, cookie string) (*Session, error) {
	if len(cookie) != 43 { // 32 random bytes, base64url: anything else was never issued
		return nil, ErrNoSession
	}
	c, err := r.conn.get(ctx)
	if err != nil {
		return nil, storeFailed("load", fmt.Errorf("step/oidc: redis: load session: %w", err))
	}
	memo := r.memo.get(cookie)
	var key string
	var get rueidis.Cacheable
	if memo != nil {
		key, get = memo.key, memo.get
	} else {
		key = RedisSessionKey(cookie)
		get = c.B().Get().Key(key).Cache().Pin()
	}
	spanCtx, end := redisSpan(ctx, "GET")
	res := c.DoCache(spanCtx, get, clientCacheTTL)
	end(res.NonRedisError())
	r.loads.Add(1)
	if res.IsCacheHit() {
		r.hits.Add(1)
	}
	v, err := res.ToString()
	if rueidis.IsRedisNil(err) {
		r.memo.drop(cookie)
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, storeFailed("load", fmt.Errorf("step/oidc: redis: load session: %w", err))
	}
	if memo != nil && memo.raw == v {
		return memo.sess, nil
	}
	s, err := openSession(cookie, v)
	if err != nil {
		return nil, err
	}
	r.memo.put(cookie, &memoEntry{key: key, get: get, raw: v, sess: s})
	return s, nil
}

// openSession decodes the sealed value stored for handle.
func openSession(handle, v string) (*Session, error) {
	sl, err := handleSealer(handle)
	if err != nil {
		return nil, err
	}
	plain, err := sl.open(v, "session")
	if err != nil {
		return nil, ErrNoSession
	}
	var s Session
	if err := json.Unmarshal(plain, &s); err != nil {
		return nil, ErrNoSession
	}
	return &s, nil
}

// Clear implements Store.
func (r *RedisStore) Clear(ctx context.Context, cookie string) error {
	key := RedisSessionKey(cookie)
	r.memo.drop(cookie)
	ctx, end := redisSpan(ctx, "DEL")
	err := r.write(ctx, func(b rueidis.Builder) rueidis.Completed { return b.Del().Key(key).Build() }, key)
	end(err)
	if err != nil {
		return storeFailed("delete", fmt.Errorf("step/oidc: redis: delete session: %w", err))
	}
	return nil
}

// write sends a command that changes key, followed on the same connection by a PTTL
// of key. Redis sends this connection the invalidation of key (if it cached it) before
// the PTTL's reply, and the client applies it before handing that reply over: when
// write returns, this replica no longer serves the old value, even for a moment.
func (r *RedisStore) write(ctx context.Context, cmd func(rueidis.Builder) rueidis.Completed, key string) error {
	c, err := r.conn.get(ctx)
	if err != nil {
		return err
	}
	res := c.DoMulti(ctx, cmd(c.B()), c.B().Pttl().Key(key).Build())
	if err := res[0].Error(); err != nil {
		return err
	}
	return res[1].Error()
}

// FirstUse implements Store with SET NX, shared by every replica.
func (r *RedisStore) FirstUse(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	c, err := r.conn.get(ctx)
	if err != nil {
		return false, storeFailed("first_use", fmt.Errorf("step/oidc: redis: record state: %w", err))
	}
	k := RedisKeyPrefix + "used:" + hex.EncodeToString(digest("used", key))
	spanCtx, end := redisSpan(ctx, "SET NX")
	err = c.Do(spanCtx, c.B().Set().Key(k).Value("1").Nx().Px(ttl).Build()).Error()
	switch {
	case rueidis.IsRedisNil(err):
		end(nil)
		return false, nil
	case err != nil:
		end(err)
		return false, storeFailed("first_use", fmt.Errorf("step/oidc: redis: record state: %w", err))
	}
	end(nil)
	return true, nil
}

// CacheStats reports how many Loads asked the client-side cache and how many of them
// it answered without a round trip to Redis.
func (r *RedisStore) CacheStats() (loads, hits int64) { return r.loads.Load(), r.hits.Load() }

// clientCaching is false when the Redis reached cannot track keys (before Redis 6).
func (r *RedisStore) clientCaching() bool { return r.memo != nil && !r.conn.uncached.Load() }

// Ping checks the connection.
func (r *RedisStore) Ping(ctx context.Context) error { return r.conn.ping(ctx) }

// Close implements Store.
func (r *RedisStore) Close() error {
	r.conn.close()
	return nil
}
