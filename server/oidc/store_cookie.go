package oidc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// CookieStore keeps the whole session in the cookie, encrypted and authenticated.
// Used states are remembered in this process only.
type CookieStore struct {
	name   string
	sealer *sealer
	used   *usedSet
	// memo remembers the sessions opened from recent cookies. A sealed cookie opens
	// to one session only (AES-GCM authenticates it), so a cookie seen before needs
	// no base64, AES-GCM or JSON again.
	memo *sessionMemo
}

// NewCookieStore returns a store sealing sessions with key (32 bytes) for the cookie name.
func NewCookieStore(key []byte, name string) (*CookieStore, error) {
	s, err := newSealer(key, "session")
	if err != nil {
		return nil, fmt.Errorf("step/oidc: cookie key: %w", err)
	}
	return &CookieStore{name: name, sealer: s, used: newUsedSet(100_000), memo: newSessionMemo(cookieMemoEntries)}, nil
}

// Save implements Store.
func (c *CookieStore) Save(_ context.Context, s *Session, _ string) (string, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	v := c.sealer.seal(plain, c.name)
	if len(c.name)+len(v) > maxCookieBytes {
		return "", fmt.Errorf("step/oidc: session of %d bytes does not fit in a cookie; configure session.redis", len(v))
	}
	return v, nil
}

// Load implements Store.
func (c *CookieStore) Load(_ context.Context, cookie string) (*Session, error) {
	if e := c.memo.get(cookie); e != nil {
		return e.sess, nil
	}
	plain, err := c.sealer.open(cookie, c.name)
	if err != nil {
		return nil, ErrNoSession
	}
	var s Session
	if err := json.Unmarshal(plain, &s); err != nil {
		return nil, ErrNoSession
	}
	// The cookie is usually a part of the request's cookie header: keep a copy, not
	// the whole header.
	c.memo.put(strings.Clone(cookie), &memoEntry{sess: &s})
	return &s, nil
}

// Clear implements Store; the cookie is expired by the caller, nothing is kept here.
func (c *CookieStore) Clear(context.Context, string) error { return nil }

// FirstUse implements Store.
func (c *CookieStore) FirstUse(_ context.Context, key string, ttl time.Duration) (bool, error) {
	return c.used.add(key, time.Now().Add(ttl)), nil
}

// Close implements Store.
func (c *CookieStore) Close() error { return nil }
