// Package xdsfleet simulates the data plane of a large deployment: many gateway
// proxies and extauth replicas, each a delta ADS stream of its own that subscribes as
// its real client does, decodes every resource it receives, acknowledges it, and
// reconnects with the backoff and jitter its real client uses. `make bench` (the
// fanout section) and the fan-out tests run fleets against the real control plane.
package xdsfleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Client is one simulated data-plane client. Its state (what it holds of each type)
// survives reconnects, as Envoy's and extauth's do, and is announced on every new
// stream as initial_resource_versions.
type Client struct {
	Node, Role string
	addr       string
	backoff    Backoff
	sub        *subscriptions // used by the stream goroutine only
	cancel     context.CancelFunc
	done       chan struct{}

	received  atomic.Int64 // bytes of resources received
	rawRoutes atomic.Bool  // route configurations are taken undecoded

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every response and stream end
	held     map[string]map[string]arrival
	answered map[string]bool // types answered on the current stream
	streams  int             // streams opened that received a response
	removals int             // resources a response removed
	nacks    int             // responses that did not decode
	err      error           // why the last stream ended
	gate     chan struct{}   // while stalled, closed by Resume; nil otherwise
}

type arrival struct {
	version string
	at      time.Time
}

// Backoff is how long a client waits before opening a stream again after failure n
// (0 the first) of an outage that has lasted down.
type Backoff func(n int, down time.Duration) time.Duration

// Start connects a client of role to the ADS server at addr; it runs until Close.
func Start(ctx context.Context, addr, role, node string, b Backoff) (*Client, error) {
	if b == nil {
		b = BackoffOf(role)
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &Client{Node: node, Role: role, addr: addr, backoff: b, cancel: cancel, done: make(chan struct{}),
		sub: newSubscriptions(role), changed: make(chan struct{}), held: map[string]map[string]arrival{}, answered: map[string]bool{}}
	// The reconnect waits are the Backoff's: gRPC's own wait before dialing again
	// (from 1s growing to 2 minutes by default) is capped at a second, as Envoy dials
	// anew on every attempt.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		cancel()
		return nil, err
	}
	go c.run(ctx, conn)
	return c, nil
}

// run opens streams until ctx ends, waiting as the backoff says between failures; a
// stream that received a response starts the count again.
func (c *Client) run(ctx context.Context, conn *grpc.ClientConn) {
	defer close(c.done)
	defer conn.Close()
	failures := 0
	var broke time.Time // when the outage began
	for {
		got, err := c.stream(ctx, conn)
		c.mu.Lock()
		c.err = err
		c.answered = map[string]bool{}
		c.notify()
		c.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if got {
			failures = 0
		}
		if failures == 0 {
			broke = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.backoff(failures, time.Since(broke))):
		}
		failures++
	}
}

// stream runs one ADS stream until it breaks; got says whether it received anything.
func (c *Client) stream(ctx context.Context, conn *grpc.ClientConn) (got bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return false, err
	}
	node := &core.Node{Id: c.Node, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{xds.RoleKey: structpb.NewStringValue(c.Role)}}}
	sub := c.sub
	for _, typ := range sub.initial() {
		req := sub.request(typ, c.versions(typ))
		req.Node = node
		if err := s.Send(req); err != nil {
			return false, err
		}
	}
	for {
		resp, err := s.Recv()
		if err != nil {
			return got, err
		}
		if !got {
			c.mu.Lock()
			c.streams++
			c.mu.Unlock()
		}
		got = true
		c.mu.Lock()
		gate := c.gate
		c.mu.Unlock()
		if gate != nil { // stalled: neither read nor answer until resumed
			select {
			case <-gate:
			case <-ctx.Done():
				return got, ctx.Err()
			}
		}
		more, detail := c.apply(resp, sub)
		ack := &discovery.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}
		if detail != "" {
			ack.ErrorDetail = &rpcstatus.Status{Message: detail}
		}
		if err := s.Send(ack); err != nil {
			return got, err
		}
		for _, req := range more {
			if err := s.Send(req); err != nil {
				return got, err
			}
		}
	}
}

// apply decodes resp into what the client holds and returns the subscription
// changes it leads to (a new cluster's endpoints, a listener's route configuration),
// and the NACK detail when a resource does not decode.
func (c *Client) apply(resp *discovery.DeltaDiscoveryResponse, sub *subscriptions) ([]*discovery.DeltaDiscoveryRequest, string) {
	now := time.Now()
	typ := resp.GetTypeUrl()
	var size int64
	var refs []string
	for _, r := range resp.GetResources() {
		v := r.GetResource().GetValue()
		size += int64(len(v))
		decode := decode
		if c.rawRoutes.Load() {
			switch typ {
			case xds.RouteType:
				decode = func(_ string, b []byte) ([]string, error) { return routesWithoutVirtualHosts(b) }
			case xds.VirtualHostType:
				continue
			}
		}
		names, err := decode(typ, v)
		if err != nil {
			c.mu.Lock()
			c.nacks++
			c.mu.Unlock()
			return nil, fmt.Sprintf("%s %s: %v", typ, r.GetName(), err)
		}
		refs = append(refs, names...)
	}
	c.received.Add(size)
	c.mu.Lock()
	byName := c.held[typ]
	if byName == nil {
		byName = map[string]arrival{}
		c.held[typ] = byName
	}
	for _, r := range resp.GetResources() {
		byName[r.GetName()] = arrival{r.GetVersion(), now}
	}
	for _, name := range resp.GetRemovedResources() {
		if _, ok := byName[name]; ok {
			c.removals++
		}
		delete(byName, name)
	}
	c.answered[typ] = true
	c.notify()
	c.mu.Unlock()
	return sub.follow(typ, resp, refs), ""
}

// notify wakes the waiters (c.mu held).
func (c *Client) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// versions are the versions held of typ, for initial_resource_versions.
func (c *Client) versions(typ string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.held[typ]))
	for n, a := range c.held[typ] {
		out[n] = a.version
	}
	return out
}

// Stall makes the client stop reading its stream (and answering) after its next
// response, as a client whose process hangs, until Resume.
func (c *Client) Stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate == nil {
		c.gate = make(chan struct{})
	}
}

// Resume undoes Stall: the client reads what waited and goes on.
func (c *Client) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate != nil {
		close(c.gate)
		c.gate = nil
	}
}

// Close ends the client and waits until it stopped.
func (c *Client) Close() {
	c.cancel()
	<-c.done
}

// DecodeRoutes says whether the client decodes the route configurations it receives
// (it does unless told otherwise), so that a bench can tell the control plane's part
// of a route configuration's fan-out from its many clients' decoding, which a real
// fleet does on as many machines.
func (c *Client) DecodeRoutes(on bool) { c.rawRoutes.Store(!on) }

// Received is how many bytes of resources the client received.
func (c *Client) Received() int64 { return c.received.Load() }

// Count is how many resources of typ the client holds.
func (c *Client) Count(typ string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held[typ])
}

// Version is the version held of a resource, "" if none.
func (c *Client) Version(typ, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[typ][name].version
}

// Versions are the versions held of typ.
func (c *Client) Versions(typ string) map[string]string { return c.versions(typ) }

// Stats are counts of what happened to a client.
type Stats struct {
	// Streams opened that received a response; Removals of resources held; NACKs sent.
	Streams, Removals, Nacks int
	// Answered are the types answered on the current stream.
	Answered map[string]bool
	// Err is why the last stream ended (nil while the first runs).
	Err error
}

// Stats says what happened to the client so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Streams: c.streams, Removals: c.removals, Nacks: c.nacks, Answered: maps.Clone(c.answered), Err: c.err}
}

// WaitFor waits until cond holds (checked after every response and stream end) or
// ctx ends.
func (c *Client) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("xdsfleet: %s: %w", c.Node, ctx.Err())
		}
	}
}

// WaitVersion waits until the client holds a version of name other than old and
// returns when it arrived.
func (c *Client) WaitVersion(ctx context.Context, typ, name, old string) (time.Time, error) {
	var at time.Time
	err := c.WaitFor(ctx, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		a, ok := c.held[typ][name]
		at = a.at
		return ok && a.version != old
	})
	return at, err
}

// Answered says whether the current stream answered every wildcard subscription (a
// new stream's first state has arrived).
func (c *Client) Answered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, typ := range c.sub.wildcard {
		if !c.answered[typ] {
			return false
		}
	}
	return true
}

// Names are the resources of typ the client holds, sorted.
func (c *Client) Names(typ string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.held[typ]))
}

// Stalled says whether the client is stalled.
func (c *Client) Stalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gate != nil
}
