package xds

import (
	"context"
	"errors"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// dispatch is the cache go-control-plane's server asks: it sends each delta watch to
// the delta set of the node's role and the requested type, and each
// state-of-the-world watch to its linear cache (filled when first asked), and holds watches of roles not published yet until their first
// Publish.
type dispatch struct{ s *Server }

var _ cachev3.Cache = dispatch{}

func (d dispatch) CreateWatch(req *cachev3.Request, sub cachev3.Subscription, ch chan cachev3.Response) (func(), error) {
	return d.s.watch(req.GetNode(), req.GetTypeUrl(), func(r *role) (func(), error) {
		return d.s.linear(r, req.GetTypeUrl()).CreateWatch(req, sub, ch)
	})
}

func (d dispatch) CreateDeltaWatch(req *cachev3.DeltaRequest, sub cachev3.Subscription, ch chan cachev3.DeltaResponse) (func(), error) {
	change := d.s.cb.takeNames(req)
	sub = namedSubscription{Subscription: sub, names: change.names.m}
	return d.s.watch(req.GetNode(), req.GetTypeUrl(), func(r *role) (func(), error) {
		return r.sets[req.GetTypeUrl()].createWatch(req, sub, ch, change)
	})
}

// namedSubscription is go-control-plane's subscription of a delta stream (whether it
// is wildcard, and what the client holds) with the names the stream subscribed to,
// which callbacks.keepNames keeps.
type namedSubscription struct {
	cachev3.Subscription
	names map[string]struct{}
}

func (s namedSubscription) SubscribedResources() map[string]struct{} { return s.names }

func (d dispatch) Fetch(context.Context, *cachev3.Request) (cachev3.Response, error) {
	return nil, status.Error(codes.Unimplemented, "xds: REST fetch is not served; use ADS")
}

// watch creates the watch on the role's cache now, or once the role is published.
func (s *Server) watch(n *core.Node, typeURL string, create func(*role) (func(), error)) (func(), error) {
	roleName, err := roleOf(n)
	if err == nil {
		err = checkType(roleName, typeURL)
	}
	if err != nil {
		s.log.Error().Str("node", n.GetId()).Str("type", typeURL).Err(err).Msg("refusing an xDS client")
		return nil, status.Error(codes.InvalidArgument, "xds: "+err.Error())
	}
	s.mu.Lock()
	r := s.roles[roleName]
	if r != nil {
		s.mu.Unlock()
		return create(r)
	}
	pw := &pendingWatch{create: create}
	s.pending[roleName] = append(s.pending[roleName], pw)
	s.mu.Unlock()
	s.log.Info().Str("role", roleName).Str("node", n.GetId()).Str("type", typeURL).Msg("client waits: nothing published for its role yet")
	return pw.cancelWatch, nil
}

// pendingWatch is a watch waiting for its role's first Publish.
type pendingWatch struct {
	create func(*role) (func(), error)

	mu        sync.Mutex
	cancelled bool
	cancel    func()
}

// start creates the real watch unless the stream gave up on it meanwhile.
func (p *pendingWatch) start(r *role) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancelled {
		return nil
	}
	cancel, err := p.create(r)
	if err != nil {
		return err
	}
	p.cancel = cancel
	return nil
}

func (p *pendingWatch) cancelWatch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancelled = true
	if p.cancel != nil {
		p.cancel()
	}
}

// startPending creates the watches that waited for role, once it is published.
func (s *Server) startPending(r *role, waiting []*pendingWatch) {
	var errs []error
	for _, p := range waiting {
		errs = append(errs, p.start(r))
	}
	if err := errors.Join(errs...); err != nil {
		s.log.Error().Str("role", r.name).Err(err).Msg("starting the watches that waited for the first publish")
	}
}
