package server

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// NewGRPCServer returns a gRPC server with the ext_authz service, gRPC health checking
// and reflection. Health checking reports readiness for the whole server ("") and for
// envoy.service.auth.v3.Authorization (NOT_SERVING until a.Configured, and again from
// a.Leave), and liveness for LivenessService (see readiness).
func NewGRPCServer(a *Authorizer, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append([]grpc.ServerOption{grpc.ForceServerCodecV2(newWireCodec())}, opts...)...)
	s.RegisterService(&authorizationDesc, a)
	hs := health.NewServer()
	a.ready.attach(hs)
	healthpb.RegisterHealthServer(s, &healthService{Server: hs, peers: &a.ready.peers})
	reflection.Register(s)
	return s
}
