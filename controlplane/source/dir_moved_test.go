package source_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// moveIn writes content to a temporary file in dir and renames it to name, as atomic
// writers (and the churn bench) do.
func moveIn(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	write(t, tmp, content)
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// A file moved into place is whole, so it is read without the debounce; a burst that
// also writes a file in place waits the debounce whole. The debounce and its bound
// here are an hour: anything read within the test's seconds was read without them.
func TestDirReadsAFileMovedIntoPlaceAtOnce(t *testing.T) {
	source.SetMaxDelay(t, time.Hour)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "upstream.yaml"), upstream("u", 80))
	ctx, cancel := context.WithCancel(context.Background())
	in := &inputs{ch: make(chan *source.Input, 100), done: make(chan error, 1)}
	d := &source.Dir{Path: dir, Log: zerolog.New(zerolog.NewTestWriter(t)), Debounce: time.Hour, Retry: time.Hour}
	go func() { in.done <- d.Run(ctx, func(i *source.Input) { in.ch <- i }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-in.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	in.await(t, "the upstream", func(i *source.Input) bool { return i.Resources.Len() == 1 })

	moveIn(t, dir, "a.yaml", authConfig("a"))
	in.await(t, "AuthConfig a, moved into place", func(i *source.Input) bool {
		return slices.Contains(ids(i), "AuthConfig ns.a@a.yaml")
	})

	// Written in place, b may be read half written: the burst waits the debounce,
	// and c, moved in with it, waits too.
	write(t, filepath.Join(dir, "b.yaml"), authConfig("b"))
	moveIn(t, dir, "c.yaml", authConfig("c"))
	select {
	case i := <-in.ch:
		t.Fatalf("a burst with a file written in place was read before the debounce: %s", describe(i))
	case <-time.After(500 * time.Millisecond):
	}
}
