package oidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Client-side caching of Redis sessions (Redis 6+ CLIENT TRACKING, through rueidis):
// a replica keeps the sessions it has read in memory and Redis tells it, on the same
// connection, when one of them changes or is deleted on any replica. The bounds below
// are what a replica can be wrong about, and for how long.
const (
	// redisTimeout bounds a dial, a command and the health PING of an idle connection
	// (sent every redisKeepAlive). A connection that misses it is closed, and with it
	// the sessions cached through it: a replica cut off from Redis without a FIN stops
	// trusting its cache within redisKeepAlive+redisTimeout.
	redisTimeout   = time.Second
	redisKeepAlive = time.Second
	// clientCacheTTL is the longest a session is served from memory without asking
	// Redis again, whatever the invalidations say: a bound if one were ever lost on a
	// healthy connection. A session's own Redis TTL, when shorter, is the bound.
	clientCacheTTL = 10 * time.Second
	// clientCacheBytes bounds the cached sessions per Redis node (least recently used
	// ones go first; a session no longer in memory costs one round trip).
	clientCacheBytes = 64 << 20
	// redisRetryEvery is how often a store that has not reached Redis yet tries again.
	redisRetryEvery = time.Second
)

// redisClientName names the store's connections in CLIENT LIST.
const redisClientName = "gatehouse-oidc"

// redisConn is a rueidis client made in the background: rueidis needs Redis to answer
// before it can tell a single node from a cluster, and an AuthConfig must be served
// (failing Checks as failOnFetchFailure says) while Redis is still down.
type redisConn struct {
	opt    rueidis.ClientOption
	client atomic.Pointer[rueidisClient]
	err    atomic.Pointer[error] // why there is no client yet
	tried  chan struct{}         // closed after the first attempt
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	// uncached is set when the server cannot track keys (RESP2 only, before Redis 6):
	// every Load then asks Redis.
	uncached atomic.Bool
}

type rueidisClient struct{ rueidis.Client }

func newRedisConn(addrs []string, cache bool) *redisConn {
	c := &redisConn{
		opt: rueidis.ClientOption{
			InitAddress:       addrs,
			ClientName:        redisClientName,
			Dialer:            net.Dialer{Timeout: redisTimeout, KeepAlive: redisKeepAlive},
			ConnWriteTimeout:  redisTimeout,
			DisableRetry:      true, // the request deadline is short; a retry would not fit in it
			DisableCache:      !cache,
			CacheSizeEachConn: clientCacheBytes,
			// One connection per node: a write and the invalidation it causes for this
			// replica's own cache travel on the connection that cached the key (see
			// RedisStore.write).
			PipelineMultiplex: -1,
			// A callback makes every connection read in the background from the start,
			// so invalidations are applied when they arrive, not at the next command.
			OnInvalidations: func([]rueidis.RedisMessage) {},
		},
		tried: make(chan struct{}),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	openConns.Store(c, struct{}{})
	go c.connect()
	return c
}

// connect makes the client, trying again every redisRetryEvery until it succeeds or
// the store is closed.
func (c *redisConn) connect() {
	defer close(c.done)
	for first := true; ; first = false {
		cl, err := rueidis.NewClient(c.opt)
		if errors.Is(err, rueidis.ErrNoCache) {
			c.opt.DisableCache = true
			c.uncached.Store(true)
			cl, err = rueidis.NewClient(c.opt)
		}
		if err == nil {
			c.client.Store(&rueidisClient{cl})
		} else {
			c.err.Store(&err)
		}
		if first {
			close(c.tried)
		}
		if err == nil {
			return
		}
		select {
		case <-c.stop:
			return
		case <-time.After(redisRetryEvery):
		}
	}
}

// get returns the client, or why there is none yet. Before the first connection
// attempt has ended it waits for it, within ctx.
func (c *redisConn) get(ctx context.Context) (rueidis.Client, error) {
	if cl := c.client.Load(); cl != nil {
		return cl.Client, nil
	}
	select {
	case <-c.tried:
	case <-ctx.Done():
		return nil, fmt.Errorf("not connected yet: %w", ctx.Err())
	}
	if cl := c.client.Load(); cl != nil {
		return cl.Client, nil
	}
	if err := c.err.Load(); err != nil {
		return nil, fmt.Errorf("not connected: %w", *err)
	}
	return nil, errors.New("not connected")
}

// ping waits for the first connection attempt and asks Redis for PONG.
func (c *redisConn) ping(ctx context.Context) error {
	cl, err := c.get(ctx)
	if err != nil {
		return err
	}
	return cl.Do(ctx, cl.B().Ping().Build()).Error()
}

func (c *redisConn) close() {
	c.once.Do(func() {
		openConns.Delete(c)
		close(c.stop)
		<-c.done
		if cl := c.client.Load(); cl != nil {
			cl.Close()
		}
	})
}
