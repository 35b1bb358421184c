package xds

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// callbacks keep the books of every stream: who is on it, what each response carried,
// and whether the client took it.
type callbacks struct {
	s *Server

	mu      sync.Mutex
	streams map[streamID]*streamBook
	// booked are names of other types than bookTypes whose acknowledgements are kept
	// too, while someone waits for them (Server.Book).
	booked map[string]map[string]bool
	// names hand what each delta request did to its stream's names (keepNames) to the
	// delta set that answers it (takeNames).
	names map[*discovery.DeltaDiscoveryRequest]nameChange
	sets  *nameSets
}

// streamID names a stream: go-control-plane numbers state-of-the-world and delta
// streams separately, each from 1, so the number alone would mix up two clients.
type streamID struct {
	delta bool
	id    int64
}

type streamBook struct {
	role, node string // role is "" until the node named a valid one
	// joining: the node said it was not serving yet (ServingKey) when it named its role.
	joining bool
	// peer is who the client's certificate names, when roles come from certificates.
	peer mtls.Peer
	ctx  context.Context // the stream's, for the peer's address in a refusal
	// sent are the responses not answered yet, per type, oldest first.
	sent map[string][]sentResponse
	// acked is what the client acknowledged of each of bookTypes, and of the names
	// booked of other types (a delta client's; a state-of-the-world client's are its
	// responses' versions).
	acked map[string]*held
	// subs are what the stream subscribed to, per type; a type is in it once the
	// stream requested it. handed is its request whose change is not taken yet.
	subs   map[string]subscription
	handed *discovery.DeltaDiscoveryRequest
	// guard ends the stream of a stalled client (stall.go); timer checks, while
	// responses are unanswered, whether the oldest waited past its limit.
	guard *stallGuard
	timer *time.Timer
}

type sentResponse struct {
	nonce string
	at    time.Time // when it was handed to the stream
	// what a delta response carried and removed, and the version table it brought the
	// client to, if any; a state-of-the-world response keeps the response itself and
	// its names are read only if it is NACKed.
	resources []*discovery.Resource
	removed   []string
	table     *versionTable
	sotw      *discovery.DiscoveryResponse
}

func newCallbacks(s *Server) *callbacks {
	return &callbacks{s: s, streams: map[streamID]*streamBook{}, names: map[*discovery.DeltaDiscoveryRequest]nameChange{}, sets: newNameSets()}
}

var _ serverv3.Callbacks = (*callbacks)(nil)

func (c *callbacks) OnStreamOpen(ctx context.Context, id int64, _ string) error {
	return c.open(ctx, streamID{false, id})
}

func (c *callbacks) OnDeltaStreamOpen(ctx context.Context, id int64, _ string) error {
	return c.open(ctx, streamID{true, id})
}

func (c *callbacks) OnStreamClosed(id int64, _ *core.Node)      { c.closed(streamID{false, id}) }
func (c *callbacks) OnDeltaStreamClosed(id int64, _ *core.Node) { c.closed(streamID{true, id}) }
func (c *callbacks) OnFetchRequest(context.Context, *discovery.DiscoveryRequest) error {
	return nil
}
func (c *callbacks) OnFetchResponse(*discovery.DiscoveryRequest, *discovery.DiscoveryResponse) {}

func (c *callbacks) OnStreamRequest(id int64, req *discovery.DiscoveryRequest) error {
	return c.request(streamID{false, id}, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail().GetMessage(), req.GetErrorDetail() != nil)
}

func (c *callbacks) OnStreamDeltaRequest(id int64, req *discovery.DeltaDiscoveryRequest) error {
	sid := streamID{true, id}
	change := c.keepNames(sid, req)
	if err := c.request(sid, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail().GetMessage(), req.GetErrorDetail() != nil); err != nil {
		return err
	}
	c.handNames(sid, req, change)
	return nil
}

func (c *callbacks) OnStreamResponse(_ context.Context, id int64, _ *discovery.DiscoveryRequest, resp *discovery.DiscoveryResponse) {
	c.sent(streamID{false, id}, resp.GetTypeUrl(), sentResponse{nonce: resp.GetNonce(), sotw: resp}, len(resp.GetResources()))
}

func (c *callbacks) OnStreamDeltaResponse(id int64, _ *discovery.DeltaDiscoveryRequest, resp *discovery.DeltaDiscoveryResponse) {
	sr := sentResponse{nonce: resp.GetNonce(), resources: resp.GetResources(), removed: resp.GetRemovedResources(), table: c.s.handed.take(resp)}
	c.sent(streamID{true, id}, resp.GetTypeUrl(), sr, len(resp.GetResources())+len(resp.GetRemovedResources()))
}

// open books a new stream under the identity its connection presents, or refuses it.
func (c *callbacks) open(ctx context.Context, id streamID) error {
	p, err := c.s.authenticate(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.streams[id] = &streamBook{sent: map[string][]sentResponse{}, peer: p, ctx: ctx, guard: guardOf(ctx)}
	c.mu.Unlock()
	return nil
}

// request notes the node of a stream and settles the response a request answers. A
// node that claims another role than the stream's certificate ends the stream.
func (c *callbacks) request(id streamID, node *core.Node, typeURL, nonce, detail string, nack bool) error {
	c.mu.Lock()
	b := c.streams[id]
	if b == nil {
		b = &streamBook{sent: map[string][]sentResponse{}}
		c.streams[id] = b
	}
	if err := c.s.checkClaim(b.ctx, b.peer, node); err != nil {
		c.mu.Unlock()
		return err
	}
	joined := false
	if node != nil && b.role == "" {
		b.node = node.GetId()
		if role, err := roleOf(node); err == nil {
			b.role = role
			joined = true
			if v, ok := node.GetMetadata().GetFields()[ServingKey]; ok {
				b.joining = !v.GetBoolValue()
			}
			c.s.metrics.clients.WithLabelValues(role).Inc()
		}
		if b.guard != nil {
			b.guard.named(b.role, b.node)
		}
	}
	if nonce == "" {
		role, nodeID := b.role, b.node
		c.mu.Unlock()
		if joined && c.s.o.OnConnect != nil {
			c.s.o.OnConnect(role, nodeID)
		}
		return nil
	}
	answered, rest := settle(b.sent[typeURL], nonce)
	b.sent[typeURL] = rest
	if answered != nil && c.s.o.OnAcked != nil {
		if slices.Contains(bookTypes, typeURL) {
			b.ack(typeURL, answered, nack)
		} else if names := c.booked[typeURL]; len(names) > 0 && !nack {
			b.ackBooked(typeURL, answered, names)
		}
	}
	role, nodeID, identity := b.role, b.node, b.peer.ID
	c.mu.Unlock()
	if joined && c.s.o.OnConnect != nil {
		c.s.o.OnConnect(role, nodeID)
	}

	if !nack {
		c.s.metrics.acks.WithLabelValues(metricRole(role), typeURL).Inc()
		if answered != nil && role != "" && c.s.o.OnAcked != nil {
			c.s.o.OnAcked(role, typeURL)
		}
		return nil
	}
	c.s.metrics.nacks.WithLabelValues(metricRole(role), typeURL).Inc()
	n := Nack{Role: role, NodeID: nodeID, TypeURL: typeURL, Detail: detail, Identity: identity}
	if answered != nil {
		n.Names, n.Versions = answered.namesAndVersions()
	}
	c.s.log.Warn().Str("role", role).Str("node", nodeID).Str("id", identity).Str("type", typeURL).Str("nonce", nonce).
		Strs("resources", n.Names).Str("detail", detail).Msg("client rejected a response (NACK)")
	if c.s.o.OnNack != nil {
		c.s.o.OnNack(n)
	}
	return nil
}

// settle takes the response nonce answers out of pending, with those it supersedes
// (sent before it): it returns that response, or nil, and the responses still
// unanswered. Those are in an array of their own, so nothing the answered ones held
// stays reachable through it.
func settle(pending []sentResponse, nonce string) (*sentResponse, []sentResponse) {
	for i := range pending {
		if pending[i].nonce == nonce {
			sr := pending[i]
			if i+1 == len(pending) {
				return &sr, nil
			}
			return &sr, slices.Clone(pending[i+1:])
		}
	}
	return nil, pending
}

// sent keeps what a response carried until the client answers it.
func (c *callbacks) sent(id streamID, typeURL string, sr sentResponse, n int) {
	c.mu.Lock()
	b := c.streams[id]
	role, node := "", ""
	if b != nil {
		sr.at = time.Now()
		b.sent[typeURL] = append(b.sent[typeURL], sr)
		role, node = b.role, b.node
		if b.guard != nil && b.timer == nil {
			b.timer = time.AfterFunc(b.guard.limit, func() { c.checkStall(id) })
		}
	}
	c.mu.Unlock()
	if t := c.s.o.Tracer; t != nil {
		_, span := t.Start(context.Background(), "xds.push", trace.WithAttributes(
			attribute.String("role", role), attribute.String("node", node), attribute.String("type", typeURL),
			attribute.String("nonce", sr.nonce), attribute.Int("resources", n)))
		span.End()
	}
	c.s.metrics.pushes.WithLabelValues(metricRole(role), typeURL).Inc()
	c.s.metrics.pushedResources.WithLabelValues(metricRole(role), typeURL).Add(float64(n))
}

func (c *callbacks) closed(id streamID) {
	c.mu.Lock()
	b := c.streams[id]
	delete(c.streams, id)
	if b != nil {
		delete(c.names, b.handed)
		if b.timer != nil {
			b.timer.Stop()
		}
	}
	c.mu.Unlock()
	if b != nil && b.role != "" {
		c.s.metrics.clients.WithLabelValues(b.role).Dec()
		if c.s.o.OnDisconnect != nil {
			c.s.o.OnDisconnect(b.role, b.node)
		}
		if c.s.o.OnAcked != nil {
			for typeURL := range b.acked {
				c.s.o.OnAcked(b.role, typeURL)
			}
		}
	}
}

// checkStall drops the stream when its oldest unanswered response waited past the
// stall limit, and otherwise checks again when it would have.
func (c *callbacks) checkStall(id streamID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.streams[id]
	if b == nil {
		return
	}
	b.timer = nil
	var oldest time.Time
	for _, pending := range b.sent {
		if len(pending) > 0 && (oldest.IsZero() || pending[0].at.Before(oldest)) {
			oldest = pending[0].at
		}
	}
	if oldest.IsZero() {
		return
	}
	if waited := time.Since(oldest); waited < b.guard.limit {
		b.timer = time.AfterFunc(b.guard.limit-waited, func() { c.checkStall(id) })
		return
	}
	b.guard.kill(errStalled{"unanswered", fmt.Sprintf("a response was neither acknowledged nor rejected for %s", b.guard.limit)})
}

// keepNames takes the names other than the wildcard out of a delta request and applies
// them to the stream's names of the type, which the stream keeps here rather than in
// go-control-plane's subscription: that holds a map of names per stream, and edits the
// client's known versions (a version table other streams share) when a name is
// unsubscribed. A stream's first request of a type that subscribes to nothing is a
// wildcard subscription (the protocol's legacy wildcard); it is made explicit, as the
// names are no longer go-control-plane's to judge.
func (c *callbacks) keepNames(id streamID, req *discovery.DeltaDiscoveryRequest) nameChange {
	c.mu.Lock()
	b := c.streams[id]
	if b == nil {
		b = &streamBook{sent: map[string][]sentResponse{}}
		c.streams[id] = b
	}
	old, requested := b.subs[req.GetTypeUrl()]
	c.mu.Unlock()
	if !requested && len(req.GetResourceNamesSubscribe()) == 0 {
		req.ResourceNamesSubscribe = []string{"*"}
	}
	change := c.sets.apply(old, req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	change.first = !requested
	withoutNames(req)
	return change
}

// handNames keeps what req did to the stream's names for the delta set to take.
func (c *callbacks) handNames(id streamID, req *discovery.DeltaDiscoveryRequest, change nameChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.streams[id]
	if b == nil {
		return
	}
	if b.subs == nil {
		b.subs = map[string]subscription{}
	}
	b.subs[req.GetTypeUrl()] = change.subscription
	delete(c.names, b.handed) // a request that made no watch
	b.handed = req
	c.names[req] = change
}

// takeNames is what req did to its stream's names.
func (c *callbacks) takeNames(req *discovery.DeltaDiscoveryRequest) nameChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	change, ok := c.names[req]
	if !ok {
		return nameChange{subscription: subscription{names: emptyNames}}
	}
	delete(c.names, req)
	return change
}
