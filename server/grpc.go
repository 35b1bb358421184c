package server

import (
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// NewGRPCServer returns a gRPC server with the ext_authz service, gRPC health checking
// (reporting SERVING for the whole server and for envoy.service.auth.v3.Authorization)
// and reflection.
func NewGRPCServer(a *Authorizer, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append([]grpc.ServerOption{grpc.ForceServerCodecV2(newWireCodec())}, opts...)...)
	s.RegisterService(&authorizationDesc, a)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(authv3.Authorization_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	a.health = hs
	reflection.Register(s)
	return s
}

// SetNotServing makes gRPC health checking report NOT_SERVING, for the server and the
// ext_authz service, while Checks are still answered: the way to have an orchestrator
// take the process out of rotation and replace it (see the plugin version limit).
func (a *Authorizer) SetNotServing() {
	a.notServing.Store(true)
	if a.health == nil {
		return
	}
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	a.health.SetServingStatus(authv3.Authorization_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
}

// Serving says whether health checking reports SERVING (SetNotServing not called).
func (a *Authorizer) Serving() bool { return !a.notServing.Load() }
