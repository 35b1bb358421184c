package xds

import "google.golang.org/grpc"

// MaxRequestSize bounds one xDS request the control plane accepts. gRPC's default, 4 MiB,
// is less than the NACK of an extauth replica that rejects thousands of configs at once
// (one line each, see xdsclient): a request refused for its size resets the stream, and
// the replica would reconnect and send the same NACK again, forever.
const MaxRequestSize = 32 << 20

// GRPCServerOptions are the options of the gRPC server the xDS server is registered
// with: its request size bound, and the codec that sends large resources without
// copying them (codec.go).
//
// The server's buffer pool (experimental.BufferPool) is left as gRPC's default: in gRPC
// 1.85 it holds only what the server receives (requests, ACKs and NACKs). Responses are
// marshaled into buffers of mem.DefaultBufferPool whatever the option says, except the
// resources of 32 KB or more, which the codec sends as their own bytes.
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxRequestSize), grpc.ForceServerCodecV2(newResponseCodec())}
}
