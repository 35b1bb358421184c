package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// Replicas is the roster of extauth replicas that may be answering Checks with what
// this control plane (or the one before it) sent them, kept in a file beside the
// state file so that a restarted control plane knows whom to wait for. A replica
// joins before it is sent anything (Join returns once the file says so), so every
// replica that may serve is in the file; one that left stays in it until it has
// been gone for Expiry, as it may be reconnecting with what it had.
type Replicas struct {
	Path   string
	Expiry time.Duration // how long a replica gone is remembered; default DefaultReplicaExpiry

	writing sync.Mutex // one write at a time; joins waiting meanwhile share the next

	mu      sync.Mutex
	entries map[string]replica
	changes uint64 // changes made to entries
	written uint64 // changes the file holds
	err     error  // of the last write
}

// DefaultReplicaExpiry is how long a replica that left is remembered: well past
// extauth's longest reconnect wait (15 s).
const DefaultReplicaExpiry = time.Minute

type replica struct {
	streams int       // open now, in this process
	Left    time.Time `json:"left,omitzero"` // zero: connected when written
}

type replicasFile struct {
	Written  time.Time          `json:"written"`
	Replicas map[string]replica `json:"replicas"`
}

// ReplicasPath is the roster file of the state file at statePath.
func ReplicasPath(statePath string) string { return statePath + ".replicas" }

// Load reads the roster written before this process started, and returns the
// replicas to wait for after a restart: those still connected as far as the file
// says (a replica's leaving is written when it leaves), and those gone for less than
// Expiry. One that does not come back is forgotten Expiry after now. ok is false when
// there is no roster (a first start, or one after a control plane that kept none):
// then nobody knows whom to wait for.
func (r *Replicas) Load(now time.Time) (remembered []string, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = map[string]replica{}
	data, err := os.ReadFile(r.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var f replicasFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, false, fmt.Errorf("%s: %w", r.Path, err)
	}
	for node, e := range f.Replicas {
		if e.Left.IsZero() {
			e.Left = now // connected when this process started: gone until it is back
		} else if now.Sub(e.Left) >= r.expiry() {
			continue
		}
		r.entries[node] = e
		remembered = append(remembered, node)
	}
	slices.Sort(remembered)
	return remembered, true, nil
}

func (r *Replicas) expiry() time.Duration {
	if r.Expiry > 0 {
		return r.Expiry
	}
	return DefaultReplicaExpiry
}

// Join notes a stream of node opening. When node was not connected, it returns once
// the file says it is.
func (r *Replicas) Join(node string, now time.Time) error {
	r.mu.Lock()
	if r.entries == nil {
		r.entries = map[string]replica{}
	}
	e := r.entries[node]
	e.streams++
	joined := e.streams == 1
	e.Left = time.Time{}
	r.entries[node] = e
	if joined {
		r.changes++
	}
	r.mu.Unlock()
	if !joined {
		return nil
	}
	return r.sync(now)
}

// Leave notes a stream of node closing; once none is open the file says it left now.
func (r *Replicas) Leave(node string, now time.Time) error {
	r.mu.Lock()
	e, ok := r.entries[node]
	if !ok || e.streams == 0 {
		r.mu.Unlock()
		return nil
	}
	e.streams--
	if e.streams == 0 {
		e.Left = now
		r.changes++
	}
	r.entries[node] = e
	left := e.streams == 0
	r.mu.Unlock()
	if !left {
		return nil
	}
	return r.sync(now)
}

// sync returns once the file holds every change made before it was called: written
// by this call, or by one that was writing meanwhile and took it along.
func (r *Replicas) sync(now time.Time) error {
	r.mu.Lock()
	want := r.changes
	r.mu.Unlock()
	r.writing.Lock()
	defer r.writing.Unlock()
	r.mu.Lock()
	if r.written >= want {
		err := r.err
		r.mu.Unlock()
		return err
	}
	f := replicasFile{Written: now, Replicas: map[string]replica{}}
	for node, e := range r.entries {
		if !e.Left.IsZero() && now.Sub(e.Left) >= r.expiry() {
			delete(r.entries, node)
			continue
		}
		f.Replicas[node] = e
	}
	changes := r.changes
	r.mu.Unlock()
	data, err := json.Marshal(f)
	if err == nil {
		err = writeAtomic(r.Path, data)
	}
	if err != nil {
		// A roster that may lack a replica must not be trusted by the next start:
		// without one, it waits for whoever may be reconnecting.
		if rerr := os.Remove(r.Path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
	if err == nil {
		r.written = changes
	}
	return err
}
