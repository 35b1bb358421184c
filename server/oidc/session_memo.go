package oidc

import (
	"sync"

	"github.com/redis/rueidis"
)

// Bounds of the decoded sessions a store keeps. A RedisStore's entries are keyed by
// the 43-byte handle and hold a few KB; a CookieStore's are keyed by the sealed
// cookie itself (1 to 4 KB), so it keeps fewer.
const (
	memoEntries       = 20_000
	cookieMemoEntries = 5_000
)

// sessionMemo remembers, per cookie handle, its Redis key and the session last
// decoded from a stored value. It decides nothing: Load still asks the client-side
// cache (or Redis) for the value on every Check and uses the decoded session only
// when the value is the very one it was decoded from, so the memo saves the key
// derivation, AES-GCM open and JSON decode and can never be staler than the cache.
type sessionMemo struct {
	mu      sync.RWMutex
	entries map[string]*memoEntry
	max     int
}

type memoEntry struct {
	key  string            // RedisSessionKey(handle)
	get  rueidis.Cacheable // GET key, built once (pinned): building hashes the key for its cluster slot
	raw  string            // the sealed value sess was decoded from
	sess *Session          // shared: callers never modify a loaded session
}

func newSessionMemo(max int) *sessionMemo {
	return &sessionMemo{entries: make(map[string]*memoEntry), max: max}
}

// get returns the entry of handle, or nil. A nil memo remembers nothing.
func (m *sessionMemo) get(handle string) *memoEntry {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.entries[handle]
}

// put records e for handle. When full it forgets an arbitrary entry (Go's map order
// is random): a forgotten session is decoded again, which costs time, not safety.
func (m *sessionMemo) put(handle string, e *memoEntry) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[handle]; !ok && len(m.entries) >= m.max {
		for k := range m.entries {
			delete(m.entries, k)
			break
		}
	}
	m.entries[handle] = e
}

// drop forgets handle.
func (m *sessionMemo) drop(handle string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, handle)
}

// len is the number of entries (tests).
func (m *sessionMemo) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}
