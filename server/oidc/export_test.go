package oidc

import "time"

// NewRedisStoreWithoutCache is a RedisStore that asks Redis on every Load, as before
// client-side caching: the benchmarks compare the two.
func NewRedisStoreWithoutCache(addrs []string, maxAge time.Duration) *RedisStore {
	return newRedisStore(addrs, maxAge, false)
}
