package xds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultStallTimeout is how long a response may wait to be written to a client, or
// wait for the client's ACK or NACK, before the client's stream is dropped.
const DefaultStallTimeout = 2 * time.Minute

// A stalled client is one that stopped reading its stream (its flow-control window
// is full, so writing a response blocks) or stopped answering (a response is neither
// ACKed nor NACKed). Each ADS stream holds at most one response per type in flight,
// so a stalled client costs bounded memory; it is still dropped past the stall
// timeout, with a log line and gatehouse_xds_dropped_streams_total, so that it no
// longer counts among the clients the make-before-break order waits for. The client
// may connect again.
type stallGuard struct {
	limit time.Duration
	kill  context.CancelCauseFunc

	mu         sync.Mutex // guards role and node, set by the callbacks
	role, node string
}

// errStalled is the cause of a stream ended for a stalled client.
type errStalled struct {
	reason, what string // reason is the metric label
}

func (e errStalled) Error() string { return e.what }

type guardKey struct{}

// guardOf is the stall guard of a stream's context, nil when it has none.
func guardOf(ctx context.Context) *stallGuard {
	g, _ := ctx.Value(guardKey{}).(*stallGuard)
	return g
}

func (g *stallGuard) named(role, node string) {
	g.mu.Lock()
	g.role, g.node = role, node
	g.mu.Unlock()
}

// send writes one response, and ends the stream when that takes longer than the limit.
func (g *stallGuard) send(write func() error) error {
	t := time.AfterFunc(g.limit, func() {
		g.kill(errStalled{"write_blocked", fmt.Sprintf("a response waited %s to be written (the client stopped reading)", g.limit)})
	})
	defer t.Stop()
	return write()
}

// boundedADS is the ADS service with every stream under a stall guard.
type boundedADS struct {
	serverv3.Server
	s *Server
}

func (b boundedADS) DeltaAggregatedResources(st discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	g, ctx := b.s.newGuard(st.Context())
	return b.s.guarded(g, ctx, func() error {
		return b.Server.DeltaAggregatedResources(guardedDelta{st, ctx, g})
	})
}

func (b boundedADS) StreamAggregatedResources(st discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	g, ctx := b.s.newGuard(st.Context())
	return b.s.guarded(g, ctx, func() error {
		return b.Server.StreamAggregatedResources(guardedSotw{st, ctx, g})
	})
}

func (s *Server) newGuard(parent context.Context) (*stallGuard, context.Context) {
	ctx, kill := context.WithCancelCause(parent)
	g := &stallGuard{limit: s.stallTimeout(), kill: kill}
	return g, context.WithValue(ctx, guardKey{}, g)
}

// guarded runs a stream's handler until it returns or the guard drops the stream.
// A dropped stream's handler is left to end on its own: gRPC ends the stream when
// this returns, which makes its blocked write and its read return.
func (s *Server) guarded(g *stallGuard, ctx context.Context, handle func() error) error {
	done := make(chan error, 1)
	go func() { done <- handle() }()
	select {
	case err := <-done:
		g.kill(nil)
		return err
	case <-ctx.Done():
	}
	var stalled errStalled
	if !errors.As(context.Cause(ctx), &stalled) {
		return <-done // the client went away
	}
	g.mu.Lock()
	role, node := g.role, g.node
	g.mu.Unlock()
	s.metrics.dropped.WithLabelValues(metricRole(role), stalled.reason).Inc()
	s.log.Warn().Str("role", role).Str("node", node).Str("reason", stalled.reason).Dur("limit", g.limit).
		Msg("dropping the stream of a stalled xDS client: " + stalled.what)
	return status.Error(codes.Unavailable, "xds: stream dropped: "+stalled.what)
}

func (s *Server) stallTimeout() time.Duration {
	if s.o.StallTimeout > 0 {
		return s.o.StallTimeout
	}
	return DefaultStallTimeout
}

type guardedDelta struct {
	discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer
	ctx context.Context
	g   *stallGuard
}

func (d guardedDelta) Context() context.Context { return d.ctx }

func (d guardedDelta) Send(r *discovery.DeltaDiscoveryResponse) error {
	return d.g.send(func() error { return d.AggregatedDiscoveryService_DeltaAggregatedResourcesServer.Send(r) })
}

type guardedSotw struct {
	discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer
	ctx context.Context
	g   *stallGuard
}

func (d guardedSotw) Context() context.Context { return d.ctx }

func (d guardedSotw) Send(r *discovery.DiscoveryResponse) error {
	return d.g.send(func() error { return d.AggregatedDiscoveryService_StreamAggregatedResourcesServer.Send(r) })
}
