// Package kube is the control plane's Kubernetes source: AuthConfigs, VirtualServices,
// Upstreams, Settings and Secrets read through client-go shared informers (watches, not
// polling), Services and EndpointSlices discovered into Upstreams named
// "<namespace>-<service>-<port>" with their ready endpoints, and the statuses the
// pipeline gives written back to each resource's status subresource by the leader.
//
// Every Input it publishes is complete: nothing is published before every informer has
// synced, and each Input holds every resource the informers know, so the pipeline does
// the same validation and translation as for a directory.
package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// Options configure a Source.
type Options struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Namespaces are the namespaces watched; none means every namespace.
	Namespaces []string
	// ControllerNamespace is where this control plane runs: its statuses are written
	// under status.statuses.<ControllerNamespace> and its Lease lives there.
	ControllerNamespace string
	Log                 zerolog.Logger
	// Debounce gathers the events of a burst into one Input (default 20ms).
	Debounce time.Duration
	// Memory, when set, is what served before this process started: at the first
	// Input, an object that does not decode serves its remembered version.
	Memory source.Memory
}

// Source is the Kubernetes source. Create it with New.
type Source struct {
	o   Options
	inf *informers

	mu sync.Mutex // guards what follows
	// generations are the metadata.generation of every resource in the last Input.
	generations map[source.Key]int64
	converted   map[source.Key]converted
	discovered  map[string]discoveredService
	last        *source.Input
	writer      *statusWriter // WriteStatuses', for tests

	// poke tells the status writer that the pipeline applied a new Input.
	poke chan struct{}

	dirtyMu sync.Mutex // guards what follows
	// dirty are the custom resources changed since the last Input, and dirtyAll says
	// something else changed: see build.
	dirty    map[source.Key]bool
	dirtyAll bool
	// incremental counts the Inputs made from the last one (for tests).
	incremental int
}

// New returns a Source; nothing is watched until Run.
func New(o Options) *Source {
	if o.Debounce <= 0 {
		o.Debounce = 20 * time.Millisecond
	}
	if o.ControllerNamespace == "" {
		o.ControllerNamespace = "gatehouse-system"
	}
	return &Source{o: o, converted: map[source.Key]converted{}, discovered: map[string]discoveredService{},
		poke: make(chan struct{}, 1)}
}

// Name names the source in Inputs and logs.
func (s *Source) Name() string {
	if len(s.o.Namespaces) == 0 {
		return "kube (all namespaces)"
	}
	return fmt.Sprintf("kube (namespaces %v)", s.o.Namespaces)
}

// Run watches until ctx ends, publishing a complete Input after the informers synced
// and after every burst of changes.
func (s *Source) Run(ctx context.Context, publish func(*source.Input)) error {
	changed := make(chan struct{}, 1)
	notify := func(k *source.Key) {
		s.dirtyMu.Lock()
		if k == nil {
			s.dirtyAll = true
		} else {
			if s.dirty == nil {
				s.dirty = map[source.Key]bool{}
			}
			s.dirty[*k] = true
		}
		s.dirtyMu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	inf, err := startInformers(ctx, s.o, notify)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.inf = inf
	s.mu.Unlock()
	if !inf.waitForSync(ctx) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("kube: informers did not sync")
	}
	s.o.Log.Info().Str("source", s.Name()).Msg("kube: informers synced")
	for {
		publish(s.build())
		select {
		case s.poke <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		// A rolling update or an apply of many objects is a burst of events: one Input.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.o.Debounce):
		}
	}
}

// Last returns the last Input published, or nil.
func (s *Source) Last() *source.Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Source) pokes() <-chan struct{} { return s.poke }

// informers returns the informers once Run started them, or nil.
func (s *Source) informers() *informers {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inf
}
