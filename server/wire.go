package server

import (
	"context"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Plugins get the CheckRequest's wire bytes (AuthorizationRequest.RawCheckRequest).
// Re-encoding the decoded request costs about as much as decoding it, so the server
// keeps the bytes gRPC received instead: a codec that, for Check, hands over the
// buffer it decodes, and a service description whose handler asks for it.

// wireRequest is a CheckRequest with the bytes it was decoded from.
type wireRequest struct {
	req authv3.CheckRequest
	raw []byte
}

// wireCodec is the proto codec, except that it keeps the bytes of a wireRequest.
type wireCodec struct{ encoding.CodecV2 }

func newWireCodec() wireCodec { return wireCodec{encoding.GetCodecV2("proto")} }

func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	w, ok := v.(*wireRequest)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	w.raw = data.Materialize()
	err := proto.Unmarshal(w.raw, &w.req)
	if err != nil && isUTF8Error(err) {
		// Header bytes that are not UTF-8 must not deny a valid request: carry them as
		// raw bytes, as Envoy does with encode_raw_headers.
		if fixed, ok := rawHeaders(w.raw); ok && proto.Unmarshal(fixed, &w.req) == nil {
			w.raw = fixed
			return nil
		}
	}
	return err
}

// authorizationDesc is envoy.service.auth.v3.Authorization with a Check handler that
// decodes into a wireRequest.
var authorizationDesc = func() grpc.ServiceDesc {
	d := authv3.Authorization_ServiceDesc
	d.Methods = []grpc.MethodDesc{{MethodName: "Check", Handler: checkHandler}}
	return d
}()

func checkHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(wireRequest)
	a := srv.(*Authorizer)
	if err := dec(in); err != nil {
		if c := status.Code(err); c == codes.Canceled || c == codes.DeadlineExceeded {
			// The client gave up before its request was read: nothing was decoded, and
			// nobody is waiting for an answer. Not an error of the request or of ours.
			a.log.Debug().Err(err).Msg("the client gave up before its CheckRequest was read")
			return nil, err
		}
		// gRPC has answered codes.Internal already and logs nothing: say which request.
		a.log.Error().Str("request_id", requestID(in.raw)).Err(err).Msg("CheckRequest cannot be decoded; Envoy gets codes.Internal")
		a.metrics.observe("", outcomeError)
		return nil, err
	}
	if interceptor == nil {
		return a.check(ctx, &in.req, in.raw)
	}
	return interceptor(ctx, &in.req, a.checkInfo, func(ctx context.Context, req any) (any, error) {
		r := req.(*authv3.CheckRequest)
		if r != &in.req {
			return a.check(ctx, r, nil) // an interceptor replaced the request: re-encode it
		}
		return a.check(ctx, r, in.raw)
	})
}
