package xds

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// MaxRequestSize bounds one xDS request the control plane accepts. gRPC's default, 4 MiB,
// is less than the NACK of an extauth replica that rejects thousands of configs at once
// (one line each, see xdsclient): a request refused for its size resets the stream, and
// the replica would reconnect and send the same NACK again, forever.
const MaxRequestSize = 32 << 20

// GRPCServerOptions are the options of the gRPC server the xDS server is registered
// with: its request size bound, its buffer pool, and the codec that sends large
// resources without copying them (codec.go).
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxRequestSize), experimental.BufferPool(largeUnpooled{mem.DefaultBufferPool()}),
		grpc.ForceServerCodecV2(newResponseCodec())}
}

// maxPooled is the largest buffer the gRPC server keeps for reuse (the largest tier of
// gRPC's default pool).
const maxPooled = 1 << 20

// largeUnpooled is gRPC's default buffer pool for buffers up to maxPooled; larger ones
// are allocated for each response and left to the garbage collector. The default pool
// keeps those too, in a sync.Pool, where each survives two collections: with a route
// configuration of ~4 MB sent on every virtual host edit, and the first responses of
// thousands of resources, they were ~80 MB of the heap at 10,000 services (a third of
// it), which Go's heap goal then doubled.
type largeUnpooled struct{ mem.BufferPool }

func (p largeUnpooled) Get(n int) *[]byte {
	if n > maxPooled {
		b := make([]byte, n)
		return &b
	}
	return p.BufferPool.Get(n)
}

func (p largeUnpooled) Put(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	p.BufferPool.Put(b)
}
