package state_test

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/state"
)

// TestReplicasRememberWhoMayServe follows a roster through joins, leaves and
// restarts: a replica is in the file once Join returns; after a restart, the
// replicas connected at the last write and those gone for less than the expiry are
// remembered, the others not; no file means nobody knows.
func TestReplicasRememberWhoMayServe(t *testing.T) {
	path := state.ReplicasPath(filepath.Join(t.TempDir(), "state"))
	t0 := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	restart := func(at time.Time) ([]string, bool) {
		t.Helper()
		r := &state.Replicas{Path: path}
		got, ok, err := r.Load(at)
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}
	if got, ok := restart(t0); ok || got != nil {
		t.Fatalf("without a file: %v, %t; want nothing known", got, ok)
	}

	r := &state.Replicas{Path: path}
	if _, _, err := r.Load(t0); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"a", "b", "c"} {
		if err := r.Join(node, t0); err != nil {
			t.Fatal(err)
		}
		// Written before Join returned: a start now would wait for node.
		if got, _ := restart(t0); !slices.Contains(got, node) {
			t.Fatalf("after %s joined, a restart remembers %v", node, got)
		}
	}
	// b has two streams: one closing leaves it connected.
	if err := r.Join("b", t0); err != nil {
		t.Fatal(err)
	}
	if err := r.Leave("b", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := r.Leave("c", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, ok := restart(t0.Add(30 * time.Second))
	if d := cmp.Diff([]string{"a", "b", "c"}, got); d != "" || !ok {
		t.Errorf("30 s later, remembered (-want +got):\n%s", d)
	}
	// c is forgotten once gone for the expiry; a and b, connected as far as the file
	// says, are remembered however long ago it was written.
	if got, _ := restart(t0.Add(2*time.Second + state.DefaultReplicaExpiry)); !cmp.Equal([]string{"a", "b"}, got) {
		t.Errorf("once c is gone for the expiry, remembered %v, want [a b]", got)
	}
	later := t0.Add(time.Hour)
	if got, _ := restart(later); !cmp.Equal([]string{"a", "b"}, got) {
		t.Errorf("an hour later, remembered %v, want [a b]", got)
	}
	// After a restart, a remembered replica that does not come back is forgotten once
	// the expiry has passed since the restart.
	again := &state.Replicas{Path: path}
	if _, _, err := again.Load(later); err != nil {
		t.Fatal(err)
	}
	if err := again.Join("d", later.Add(state.DefaultReplicaExpiry)); err != nil {
		t.Fatal(err)
	}
	if got, _ := restart(later.Add(state.DefaultReplicaExpiry)); !cmp.Equal([]string{"d"}, got) {
		t.Errorf("a expiry after a restart it did not come back to, remembered %v, want [d]", got)
	}
}

// TestReplicasJoinTogether: many replicas joining at once are each in the file when
// their Join returns.
func TestReplicasJoinTogether(t *testing.T) {
	path := state.ReplicasPath(filepath.Join(t.TempDir(), "state"))
	r := &state.Replicas{Path: path}
	now := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		node := string(rune('A' + i))
		wg.Go(func() {
			if err := r.Join(node, now); err != nil {
				errs <- err
				return
			}
			got, _, err := (&state.Replicas{Path: path}).Load(now)
			if err == nil && !slices.Contains(got, node) {
				t.Errorf("%s joined, the file holds %v", node, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAReplicaRosterNotWrittenIsNotTrusted: when the file cannot be replaced, it is
// removed, so the next start knows nobody rather than too few.
func TestAReplicaRosterNotWrittenIsNotTrusted(t *testing.T) {
	path := state.ReplicasPath(filepath.Join(t.TempDir(), "state"))
	r := &state.Replicas{Path: path}
	now := time.Now()
	if err := r.Join("a", now); err != nil {
		t.Fatal(err)
	}
	// An empty folder where the file was: the new file cannot be renamed over it.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := r.Join("b", now); err == nil {
		t.Fatal("Join succeeded though the roster could not be written")
	}
	if got, ok, err := (&state.Replicas{Path: path}).Load(now); ok || err != nil {
		t.Errorf("after a failed write, the next start reads %v, %t, %v; want no roster", got, ok, err)
	}
}
