package devgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// refetchAfter is the least time between two fetches of a key set that a request
// triggers (an unknown kid, a failed fetch), as Envoy's failed_refetch_duration: a
// stream of tokens with made-up kids cannot turn into a stream of fetches.
const refetchAfter = time.Second

// maxJWKSBytes bounds a key set response.
const maxJWKSBytes = 1 << 20

// jwksSet is one remote key set, fetched through a cluster and kept across config
// changes (keyed by URI and cluster). The first fetch starts when a listener needs it,
// and that listener waits for it to finish, failed or not, as Envoy's async_fetch
// without fast_listener does.
type jwksSet struct {
	uri, cluster string
	timeout      time.Duration
	cacheFor     time.Duration
	up           atomic.Pointer[upstream]
	client       *http.Client

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	fetched time.Time // of keys
	tried   time.Time // last attempt, successful or not
	done    bool      // the first fetch has finished
	running chan struct{}
}

func newJWKSSet(uri, cluster string, timeout, cacheFor time.Duration) *jwksSet {
	return &jwksSet{uri: uri, cluster: cluster, timeout: timeout, cacheFor: cacheFor, client: &http.Client{
		Transport: &http.Transport{Proxy: nil},
		// A redirect would leave the cluster: Envoy does not follow it either.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// firstFetchDone reports whether the first fetch finished.
func (s *jwksSet) firstFetchDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// startFirst starts the first fetch if none ran; then calls when it finished.
func (s *jwksSet) startFirst(then func()) {
	s.mu.Lock()
	if s.done || s.running != nil {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	go func() {
		_, _ = s.refresh(context.Background(), true)
		then()
	}()
}

// keySet returns the keys, fetching them when they expired or (unknownKid) when the
// token names a key the set lacks; at most one fetch runs at a time.
func (s *jwksSet) keySet(ctx context.Context, unknownKid bool) (*jose.JSONWebKeySet, error) {
	s.mu.Lock()
	fresh := s.keys != nil && time.Since(s.fetched) < s.cacheFor
	mayRefetch := time.Since(s.tried) >= refetchAfter
	keys := s.keys
	s.mu.Unlock()
	if fresh && !(unknownKid && mayRefetch) {
		return keys, nil
	}
	if !mayRefetch && keys == nil {
		return nil, errors.New("key set not available")
	}
	if !mayRefetch {
		return keys, nil
	}
	return s.refresh(ctx, false)
}

// refresh fetches the key set, or waits for the fetch under way.
func (s *jwksSet) refresh(ctx context.Context, first bool) (*jose.JSONWebKeySet, error) {
	s.mu.Lock()
	if ch := s.running; ch != nil {
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.keys == nil {
			return nil, errors.New("key set not available")
		}
		return s.keys, nil
	}
	ch := make(chan struct{})
	s.running = ch
	s.tried = time.Now()
	s.mu.Unlock()

	keys, err := s.fetch(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.running, s.done = nil, true
	close(ch)
	if err != nil {
		return s.keys, err // the keys fetched before stay usable
	}
	s.keys, s.fetched = keys, time.Now()
	return keys, nil
}

// fetch GETs the URI from an endpoint of the cluster, with the URI's host as Host.
func (s *jwksSet) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	up := s.up.Load()
	addr := ""
	if up != nil {
		addr = up.pick()
	}
	if addr == "" {
		return nil, fmt.Errorf("cluster %s: no healthy upstream", s.cluster)
	}
	u, err := url.Parse(s.uri)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+u.RequestURI(), nil)
	if err != nil {
		return nil, err
	}
	req.Host = u.Host
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s through cluster %s: %w", s.uri, s.cluster, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s through cluster %s: status %d", s.uri, s.cluster, resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&set); err != nil {
		return nil, fmt.Errorf("key set %s: %w", s.uri, err)
	}
	return &set, nil
}
