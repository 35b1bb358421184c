package oidc

import (
	"sync"
	"time"
)

// usedSet remembers keys until they expire, bounded in size: when full it forgets the
// expired ones and, failing that, refuses new keys (a refused login is retried by the
// user; a forgotten state could be replayed).
type usedSet struct {
	mu   sync.Mutex
	max  int
	keys map[string]time.Time
}

func newUsedSet(max int) *usedSet { return &usedSet{max: max, keys: make(map[string]time.Time)} }

// add records key until exp and reports whether it was not there before.
func (u *usedSet) add(key string, exp time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	if e, ok := u.keys[key]; ok && e.After(now) {
		return false
	}
	if len(u.keys) >= u.max {
		for k, e := range u.keys {
			if !e.After(now) {
				delete(u.keys, k)
			}
		}
		if len(u.keys) >= u.max {
			return false
		}
	}
	u.keys[key] = exp
	return true
}
