package observe

import (
	"context"
	"net"
	"sync/atomic"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// receiver is an OTLP trace receiver over gRPC on loopback, as a collector runs one,
// that counts the extauth.Check spans it is sent and keeps nothing.
type receiver struct {
	coltrace.UnimplementedTraceServiceServer
	addr   string
	srv    *grpc.Server
	checks atomic.Int64 // extauth.Check spans received
}

func startReceiver() (*receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{addr: lis.Addr().String(), srv: grpc.NewServer()}
	coltrace.RegisterTraceServiceServer(r.srv, r)
	go func() { _ = r.srv.Serve(lis) }()
	return r, nil
}

// Export implements the OTLP trace service.
func (r *receiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if s.GetName() == "extauth.Check" {
					r.checks.Add(1)
				}
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}
