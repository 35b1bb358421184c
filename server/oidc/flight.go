package oidc

import "sync"

// flight runs one refresh per session at a time in this process: concurrent requests
// of one browser share the result instead of spending the refresh token twice.
type flight struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done   chan struct{}
	sess   *Session
	cookie string
	err    error
}

func (f *flight) do(key string, fn func() (*Session, string, error)) (*Session, string, error) {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.sess, c.cookie, c.err
	}
	if f.calls == nil {
		f.calls = make(map[string]*flightCall)
	}
	c := &flightCall{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()

	c.sess, c.cookie, c.err = fn()
	close(c.done)
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	return c.sess, c.cookie, c.err
}
