package xds

import "google.golang.org/grpc"

// MaxRequestSize bounds one xDS request the control plane accepts. gRPC's default, 4 MiB,
// is less than the NACK of an extauth replica that rejects thousands of configs at once
// (one line each, see xdsclient): a request refused for its size resets the stream, and
// the replica would reconnect and send the same NACK again, forever.
const MaxRequestSize = 32 << 20

// GRPCServerOptions are the options of the gRPC server the xDS server is registered
// with.
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxRequestSize)}
}
