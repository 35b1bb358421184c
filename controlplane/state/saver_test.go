package state

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestSaverWritesAfterSettleAndOnStop: an offered set is not written at once but once
// Settle has passed (StartSettle for the first write of all), and a stop writes what is
// still pending.
func TestSaverWritesAfterSettleAndOnStop(t *testing.T) {
	root := t.TempDir()
	rs := examples(t, root)
	newSaver := func(settle, start time.Duration) (*Saver, string) {
		path := filepath.Join(t.TempDir(), "cp.state")
		return &Saver{File: &File{Path: path, Root: root, Source: "dir " + root}, Log: zerolog.Nop(), Settle: settle, StartSettle: start}, path
	}
	written := func(path string) bool {
		_, err := os.Stat(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}

	t.Run("settle", func(t *testing.T) {
		s, path := newSaver(20*time.Millisecond, 20*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		s.Offer(rs)
		deadline := time.Now().Add(10 * time.Second)
		for !written(path) {
			if time.Now().After(deadline) {
				t.Fatal("the offered set was never written")
			}
			time.Sleep(5 * time.Millisecond)
		}
		m, err := s.File.Load()
		if err != nil {
			t.Fatal(err)
		}
		if m.Len() != len(rs) {
			t.Errorf("the file holds %d resources, want %d", m.Len(), len(rs))
		}
	})

	t.Run("stop", func(t *testing.T) {
		s, path := newSaver(20*time.Millisecond, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		s.Offer(rs)
		time.Sleep(50 * time.Millisecond)
		if written(path) {
			t.Error("the first write came before StartSettle passed")
		}
		cancel()
		<-done
		if !written(path) {
			t.Error("a stop did not write the pending set")
		}
	})
}
