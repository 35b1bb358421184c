package xds

import (
	"context"
	"fmt"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// Reasons a stream is refused, as counted in gatehouse_xds_refused_streams_total.
const (
	refusedNoRole    = "no_role"
	refusedWrongRole = "claims_another_role"
	refusedNoCert    = "no_certificate"
)

// authenticate says who the client of a new stream is, when the server takes roles from
// certificates: nil and a zero Peer when it does not.
func (s *Server) authenticate(ctx context.Context) (mtls.Peer, error) {
	if s.o.Authenticate == nil {
		return mtls.Peer{}, nil
	}
	p, err := s.o.Authenticate(ctx)
	switch {
	case err == nil && p.Identity.Role != "" && (p.Identity.Role == mtls.RoleExtauth || mtls.IsProxyRole(p.Identity.Role)):
		return p, nil
	case p.ID == "" && p.Subject == "":
		return p, s.refuse(ctx, p, "", refusedNoCert, fmt.Errorf("the connection presents no client certificate: %w", err))
	case err == nil:
		err = fmt.Errorf("%s names the role %q, which is served nothing", p.ID, p.Identity.Role)
	}
	return p, s.refuse(ctx, p, "", refusedNoRole, err)
}

// checkClaim refuses a node whose metadata names another role than its certificate
// does, and writes the certificate's role into a node that names none.
func (s *Server) checkClaim(ctx context.Context, p mtls.Peer, n *core.Node) error {
	if n == nil || p.Identity.Role == "" {
		return nil
	}
	v, ok := n.GetMetadata().GetFields()[RoleKey]
	if !ok {
		if n.Metadata == nil {
			n.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		}
		n.Metadata.Fields[RoleKey] = structpb.NewStringValue(p.Identity.Role)
		return nil
	}
	if claimed := v.GetStringValue(); claimed != p.Identity.Role {
		return s.refuse(ctx, p, claimed, refusedWrongRole, fmt.Errorf("node %q claims the role %q but its certificate %s names %q", n.GetId(), claimed, p.ID, p.Identity.Role))
	}
	return nil
}

// refuse logs and counts a refused stream and returns the PermissionDenied it ends with.
func (s *Server) refuse(ctx context.Context, p mtls.Peer, claimed, reason string, err error) error {
	addr := ""
	if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
		addr = pr.Addr.String()
	}
	s.metrics.refused.WithLabelValues(reason).Inc()
	s.log.Warn().Str("peer", addr).Str("subject", p.Subject).Str("id", p.ID).Str("claimed_role", claimed).
		Str("reason", reason).Err(err).Msg("refusing an xDS stream")
	return status.Error(codes.PermissionDenied, "xds: "+err.Error())
}
