package oidc

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix starts every key the step writes.
const RedisKeyPrefix = "gatehouse:oidc:"

// RedisStore keeps sessions in Redis (or a Redis Cluster) under a key derived from a
// random handle; the cookie holds only the handle. The stored value is sealed with a
// key derived from the handle too, so neither a Redis dump nor a key name is enough to
// use a session, and replicas need no shared secret to read each other's sessions.
type RedisStore struct {
	client redis.UniversalClient
	maxAge time.Duration
}

// NewRedisStore connects lazily to addrs (one address, or several for a cluster).
// maxAge is the session cookie max age (0: none configured).
func NewRedisStore(addrs []string, maxAge time.Duration) *RedisStore {
	c := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:        addrs,
		DialTimeout:  time.Second,
		ReadTimeout:  time.Second,
		WriteTimeout: time.Second,
		MaxRetries:   -1, // the request deadline is short; a retry would not fit in it
	})
	return &RedisStore{client: c, maxAge: maxAge}
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
	ttl := sessionTTL(s, r.maxAge, time.Now())
	if err := r.client.Set(ctx, RedisSessionKey(handle), sl.seal(plain, "session"), ttl).Err(); err != nil {
		return "", fmt.Errorf("step/oidc: redis: save session: %w", err)
	}
	return handle, nil
}

// Load implements Store.
func (r *RedisStore) Load(ctx context.Context, cookie string) (*Session, error) {
	if len(cookie) != 43 { // 32 random bytes, base64url: anything else was never issued
		return nil, ErrNoSession
	}
	v, err := r.client.Get(ctx, RedisSessionKey(cookie)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, fmt.Errorf("step/oidc: redis: load session: %w", err)
	}
	sl, err := handleSealer(cookie)
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
	if err := r.client.Del(ctx, RedisSessionKey(cookie)).Err(); err != nil {
		return fmt.Errorf("step/oidc: redis: delete session: %w", err)
	}
	return nil
}

// FirstUse implements Store with SET NX, shared by every replica.
func (r *RedisStore) FirstUse(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	k := RedisKeyPrefix + "used:" + hex.EncodeToString(digest("used", key))
	ok, err := r.client.SetNX(ctx, k, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("step/oidc: redis: record state: %w", err)
	}
	return ok, nil
}

// Ping checks the connection.
func (r *RedisStore) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

// Close implements Store.
func (r *RedisStore) Close() error { return r.client.Close() }
