package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"slices"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Probe opens one delta ADS stream as o's node and role (none when o.Role is "": the
// control plane then serves the role of the client's certificate), subscribes to every
// resource of o.Types, and returns the names of what the first response of each type
// carried. It returns when every type has answered, the stream ends (its error), or ctx
// ends (what arrived until then, and ctx's error). It never ACKs, so it changes nothing.
func Probe(ctx context.Context, o Options) (map[string][]string, error) {
	if o.Addr == "" || len(o.Types) == 0 {
		return nil, errors.New("xdsclient: a probe needs an address and types")
	}
	creds := o.Credentials
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(o.Addr, grpc.WithTransportCredentials(creds), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize)))
	if err != nil {
		return nil, fmt.Errorf("xdsclient: %s: %w", o.Addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return nil, fmt.Errorf("xdsclient: opening the delta ADS stream: %w", err)
	}
	c := &client{o: o}
	node := c.node()
	if o.Role == "" {
		node.Metadata = nil
	}
	for _, t := range o.Types {
		if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: t, ResourceNamesSubscribe: wildcard}); err != nil {
			break // Recv reports why
		}
	}
	got := map[string][]string{}
	for len(got) < len(o.Types) {
		resp, err := s.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return got, ctx.Err()
			}
			return got, err
		}
		if _, seen := got[resp.GetTypeUrl()]; seen {
			continue
		}
		names := []string{}
		for _, r := range resp.GetResources() {
			names = append(names, r.GetName())
		}
		slices.Sort(names)
		got[resp.GetTypeUrl()] = names
	}
	return got, nil
}
