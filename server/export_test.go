package server

import (
	"time"

	"context"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/mem"
)

// DecodeWire decodes a CheckRequest from its wire bytes as the server's gRPC codec
// does, keeping the bytes.
func DecodeWire(b []byte) (*WireRequest, error) {
	w := new(wireRequest)
	err := newWireCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, w)
	return (*WireRequest)(w), err
}

// WireRequest is a decoded CheckRequest with the bytes it came from.
type WireRequest wireRequest

// CheckWire is what the gRPC handler calls with a request from DecodeWire.
func (a *Authorizer) CheckWire(ctx context.Context, w *WireRequest) (*authv3.CheckResponse, error) {
	return a.check(ctx, &w.req, w.raw)
}

// CheckHandler is the gRPC handler of Check with dec as the message decoder.
func (a *Authorizer) CheckHandler(ctx context.Context, dec func(any) error) (any, error) {
	return checkHandler(a, ctx, dec, nil)
}

// PendingHealthCheckers counts the clients told SERVING within wait and not told
// NOT_SERVING since.
func PendingHealthCheckers(a *Authorizer, wait time.Duration) int {
	return a.ready.peers.pending(time.Now(), wait)
}
