package oidc

import (
	"context"
	"errors"
	"time"
)

// Session is what a login leaves behind: the tokens and when they stop being usable.
type Session struct {
	IDToken      string    `json:"i"`
	AccessToken  string    `json:"a,omitempty"`
	RefreshToken string    `json:"r,omitempty"`
	Expiry       time.Time `json:"e"`
	Created      time.Time `json:"c"`
}

// ErrNoSession is a cookie that names no usable session: unknown, expired, tampered.
var ErrNoSession = errors.New("no session")

// Store keeps sessions. The cookie value is all the browser holds: the sealed session
// itself (CookieStore) or a random handle to it (RedisStore). Any other error than
// ErrNoSession from Load means the store could not be asked (session.failOnFetchFailure).
type Store interface {
	// Save stores s and returns the cookie value for it. old is the cookie value of
	// the session being replaced on refresh ("" for a new login); a store may reuse it.
	Save(ctx context.Context, s *Session, old string) (string, error)
	// Load returns the session a cookie value names.
	Load(ctx context.Context, cookie string) (*Session, error)
	// Clear removes the session a cookie value names; unknown values are not an error.
	Clear(ctx context.Context, cookie string) error
	// FirstUse records key for ttl and reports whether it was new, so a login's state
	// is accepted once across every replica sharing the store.
	FirstUse(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Close releases connections.
	Close() error
}

// ttl is how long a store keeps s: the configured cookie max age, else as long as
// its refresh token may plausibly serve, else until its tokens expire.
func sessionTTL(s *Session, maxAge time.Duration, now time.Time) time.Duration {
	switch {
	case maxAge > 0:
		return maxAge
	case s.RefreshToken != "":
		return 24 * time.Hour
	}
	if d := s.Expiry.Sub(now) + time.Minute; d > time.Minute {
		return d
	}
	return time.Minute
}
