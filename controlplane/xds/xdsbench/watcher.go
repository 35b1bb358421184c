// Package xdsbench measures the control plane as a client meets it: a delta ADS
// watcher that notes when each resource version arrives on its stream, and the
// latency from an edit to its new version arriving. `make bench` and the Go
// benchmarks of controlplane/xds use it against the real server (in process or as
// the `gatehouse controlplane` process).
package xdsbench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Watcher is one delta ADS stream subscribed to every resource of some types. It
// ACKs every response at once and keeps, per resource, the last version received and
// when it arrived.
type Watcher struct {
	conn   *grpc.ClientConn
	cancel context.CancelFunc

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every response
	versions map[string]map[string]arrival
	answered map[string]bool // types that got their first response
	err      error
}

type arrival struct {
	version string
	at      time.Time
}

// Watch connects to addr as a node of role and subscribes to types.
func Watch(ctx context.Context, addr, role string, types ...string) (*Watcher, error) {
	return WatchWith(ctx, addr, insecure.NewCredentials(), role, types...)
}

// WatchWith is Watch over creds (mutual TLS, say).
func WatchWith(ctx context.Context, addr string, creds credentials.TransportCredentials, role string, types ...string) (*Watcher, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("xdsbench: %s: %w", addr, err)
	}
	w := &Watcher{conn: conn, cancel: cancel, changed: make(chan struct{}), versions: map[string]map[string]arrival{}, answered: map[string]bool{}}
	node := &core.Node{Id: fmt.Sprintf("xdsbench-%d", time.Now().UnixNano()), Metadata: &structpb.Struct{
		Fields: map[string]*structpb.Value{xds.RoleKey: structpb.NewStringValue(role)},
	}}
	for _, t := range types {
		w.versions[t] = map[string]arrival{}
		if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: t, ResourceNamesSubscribe: []string{"*"}}); err != nil {
			w.Close()
			return nil, fmt.Errorf("xdsbench: subscribing to %s: %w", t, err)
		}
	}
	go w.receive(s)
	return w, nil
}

func (w *Watcher) receive(s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient) {
	for {
		resp, err := s.Recv()
		now := time.Now()
		w.mu.Lock()
		if err != nil {
			w.err = err
			close(w.changed)
			w.mu.Unlock()
			return
		}
		byName := w.versions[resp.GetTypeUrl()]
		for _, r := range resp.GetResources() {
			byName[r.GetName()] = arrival{version: r.GetVersion(), at: now}
		}
		for _, name := range resp.GetRemovedResources() {
			delete(byName, name)
		}
		w.answered[resp.GetTypeUrl()] = true
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
		if err := s.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return
		}
	}
}

// Close ends the stream.
func (w *Watcher) Close() {
	w.cancel()
	w.conn.Close()
}

// Count is how many resources of typeURL the watcher holds.
func (w *Watcher) Count(typeURL string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.versions[typeURL])
}

// Names are the resources of typeURL the watcher holds, sorted.
func (w *Watcher) Names(typeURL string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.versions[typeURL]))
}

// Version is the version of a resource as last received, "" if none.
func (w *Watcher) Version(typeURL, name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.versions[typeURL][name].version
}

// WaitFor waits until cond holds of the watcher (checked after every response), or
// ctx ends or the stream breaks.
func (w *Watcher) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		w.mu.Lock()
		ch, err := w.changed, w.err
		w.mu.Unlock()
		if cond() {
			return nil
		}
		if err != nil {
			return fmt.Errorf("xdsbench: stream ended: %w", err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitCount waits until the watcher holds at least n resources of typeURL.
func (w *Watcher) WaitCount(ctx context.Context, typeURL string, n int) error {
	return w.WaitFor(ctx, func() bool { return w.Count(typeURL) >= n })
}

// WaitNew waits until a version of name other than old arrives and returns when it
// arrived.
func (w *Watcher) WaitNew(ctx context.Context, typeURL, name, old string) (time.Time, error) {
	var at time.Time
	err := w.WaitFor(ctx, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		a, ok := w.versions[typeURL][name]
		at = a.at
		return ok && a.version != old
	})
	return at, err
}
