package state

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// Saver writes the latest serving set to a File in the background, at most once per
// Interval, so a burst of edits costs one write and a run never waits for the disk.
// The first write after a quiet spell waits Settle, so it does not take the CPU from
// the change while the clients are still being sent it; the first write of all waits
// StartSettle, past the clients' reconnection after a restart.
type Saver struct {
	File        *File
	Log         zerolog.Logger
	Interval    time.Duration // default 1s
	Settle      time.Duration // default DefaultSettle
	StartSettle time.Duration // default DefaultStartSettle

	writing sync.Mutex // one write at a time, so the latest set is written last
	mu      sync.Mutex
	pending []*source.Resource // the latest set not written yet, nil when none
	has     bool
	wake    chan struct{}
	failing bool // the last write failed (logged once until one succeeds)
}

// DefaultSettle is Saver.Settle's default: past the time a change takes to reach
// every client, and short beside Interval.
const DefaultSettle = 250 * time.Millisecond

// DefaultStartSettle is Saver.StartSettle's default. The first write encodes every
// resource (~0.1 s of CPU at 7,500 of them; later writes reuse the lines of those
// unchanged), and after a restart the clients are then reconnecting and being sent
// what changed while the control plane was down. Until it is written, the file holds
// what served before the restart.
const DefaultStartSettle = 2 * time.Second

// Offer hands the Saver the serving versions after a run; they are shared and never
// modified, so the Saver keeps the slice as it is.
func (s *Saver) Offer(rs []*source.Resource) {
	s.mu.Lock()
	s.pending, s.has = rs, true
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run writes what is offered until ctx ends, then writes what is still pending once
// more, so a clean stop keeps the last run.
func (s *Saver) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Second
	}
	settle, first := s.Settle, s.StartSettle
	if settle <= 0 {
		settle = DefaultSettle
	}
	if first <= 0 {
		first = DefaultStartSettle
	}
	s.mu.Lock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	wake := s.wake
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			s.Flush()
			return
		case <-wake:
		}
		select {
		case <-ctx.Done():
			s.Flush()
			return
		case <-time.After(first):
		}
		first = settle
		s.Flush()
		select {
		case <-ctx.Done():
			s.Flush()
			return
		case <-time.After(interval):
		}
	}
}

// Flush writes the pending set now, if there is one.
func (s *Saver) Flush() {
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	rs, has := s.pending, s.has
	s.pending, s.has = nil, false
	s.mu.Unlock()
	if !has {
		return
	}
	start := time.Now()
	err := s.File.Save(rs)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && !s.failing:
		s.failing = true
		s.Log.Error().Err(err).Str("file", s.File.Path).Msg("state: not written; a restart would not remember what serves")
	case err == nil && s.failing:
		s.failing = false
		s.Log.Info().Str("file", s.File.Path).Msg("state: written again")
	case err == nil:
		s.Log.Debug().Int("resources", len(rs)).Dur("took", time.Since(start)).Msg("state: written")
	}
}
