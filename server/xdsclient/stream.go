package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"maps"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

type client struct {
	o     Options
	conn  *grpc.ClientConn
	state state
	log   zerolog.Logger
}

// wildcard subscribes to every resource of a type (the explicit form, so that naming
// resources later would not silently end the wildcard).
var wildcard = []string{"*"}

// stream runs one ADS stream until it breaks or ctx ends. got reports whether any
// response arrived, which resets the reconnect backoff.
func (c *client) stream(ctx context.Context) (got bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(c.conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return false, fmt.Errorf("xdsclient: opening the delta ADS stream: %w", err)
	}
	node := c.node()
	for _, t := range c.o.Types {
		req := &discovery.DeltaDiscoveryRequest{
			Node:                    node,
			TypeUrl:                 t,
			ResourceNamesSubscribe:  wildcard,
			InitialResourceVersions: maps.Clone(c.state[t].versions),
		}
		if err := s.Send(req); err != nil {
			return false, fmt.Errorf("xdsclient: subscribing to %s: %w", t, err)
		}
	}
	for {
		resp, err := s.Recv()
		if err != nil {
			return got, fmt.Errorf("xdsclient: receiving: %w", err)
		}
		if !got {
			c.log.Info().Str("role", c.o.Role).Str("node", c.o.NodeID).Msg("connected to the control plane")
		}
		got = true
		ack := c.handle(resp)
		if ctx.Err() != nil {
			// Stopping: the handler may have been cut short (server.Registry.Stop), so
			// what it returned is no verdict on the response.
			return got, ctx.Err()
		}
		if err := s.Send(ack); err != nil {
			return got, fmt.Errorf("xdsclient: acknowledging %s: %w", resp.GetTypeUrl(), err)
		}
	}
}

// handle records resp, gives the handler the type's full set and returns the ACK or
// NACK to send.
func (c *client) handle(resp *discovery.DeltaDiscoveryResponse) *discovery.DeltaDiscoveryRequest {
	ack := &discovery.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}
	ts, ok := c.state.apply(resp)
	var err error
	if !ok {
		err = errors.New("type not subscribed to")
	} else {
		err = c.o.Handle(resp.GetTypeUrl(), ts.snapshot())
		if c.o.Applied != nil {
			c.o.Applied(resp.GetTypeUrl(), maps.Clone(ts.versions), err)
		}
	}
	if err != nil {
		c.log.Warn().Str("type", resp.GetTypeUrl()).Str("nonce", resp.GetNonce()).Str("detail", err.Error()).Msg("rejecting the control plane's response")
		ack.ErrorDetail = &status.Status{Code: int32(codes.InvalidArgument), Message: err.Error()}
	}
	return ack
}

func (c *client) node() *core.Node {
	meta := map[string]*structpb.Value{xds.RoleKey: structpb.NewStringValue(c.o.Role)}
	if c.o.Serving != nil {
		meta[xds.ServingKey] = structpb.NewBoolValue(c.o.Serving())
	}
	return &core.Node{Id: c.o.NodeID, UserAgentName: "gatehouse", Metadata: &structpb.Struct{Fields: meta}}
}
