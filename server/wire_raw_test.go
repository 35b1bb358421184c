package server_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// rawMsg is a message as bytes, for a client that sends what Go's proto would refuse to
// encode (strings that are not UTF-8), as other clients may.
type rawMsg struct{ b []byte }

type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(*rawMsg).b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	v.(*rawMsg).b = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// withBytes encodes req and swaps placeholder for raw (of the same length), so the
// encoding stays well-formed but holds bytes that are not UTF-8.
func withBytes(t *testing.T, req *authv3.CheckRequest, placeholder, raw string) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(placeholder) != len(raw) || bytes.Count(b, []byte(placeholder)) != 1 {
		t.Fatalf("placeholder %q must appear once and be as long as %q", placeholder, raw)
	}
	return bytes.Replace(b, []byte(placeholder), []byte(raw), 1)
}

// Regression: header bytes that are not UTF-8 made a valid request fail to decode
// ("string field contains invalid UTF-8"), answered codes.Internal with nothing logged.
// They reach the steps as sent, whether in the headers map or in Envoy's raw form
// (encode_raw_headers: header_map with raw_value); what still cannot decode gets
// gRPC's codes.Internal and is logged with the request id.
func TestHeaderBytesThatAreNotUTF8(t *testing.T) {
	seen := make(chan map[string]string, 1)
	capture := funcStep{name: "step/capture", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		seen <- req.Headers
		var decoded authv3.CheckRequest
		if err := proto.Unmarshal(req.RawCheckRequest, &decoded); err != nil {
			return nil, err
		}
		return pluginapi.Allow(), nil
	}}
	logs := &syncbuf.Buffer{}
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.raw": {capture}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewGRPCServer(server.NewAuthorizer(reg, zerolog.New(logs), nil))
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	check := func(b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out rawMsg
		if err := conn.Invoke(ctx, authv3.Authorization_Check_FullMethodName, &rawMsg{b: b}, &out); err != nil {
			return err
		}
		var resp authv3.CheckResponse
		if err := proto.Unmarshal(out.b, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus().GetCode() != 0 {
			t.Errorf("CheckResponse = %v, want allowed", &resp)
		}
		return nil
	}

	t.Run("headers map", func(t *testing.T) {
		req := checkRequest("ns.raw", map[string]string{"x-name": "cafZ", "x-other": "plain"})
		if err := check(withBytes(t, req, "cafZ", "caf\xe9")); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if diff := cmp.Diff(map[string]string{"x-name": "caf\xe9", "x-other": "plain"}, <-seen); diff != "" {
			t.Errorf("headers the step saw (-want +got):\n%s", diff)
		}
	})
	t.Run("Envoy's raw form", func(t *testing.T) {
		req := checkRequest("ns.raw", nil)
		req.Attributes.Request.Http.Headers = nil
		req.Attributes.Request.Http.HeaderMap = &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
			{Key: "x-name", RawValue: []byte("caf\xe9")}, {Key: "x-other", RawValue: []byte("plain")},
		}}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := check(b); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if diff := cmp.Diff(map[string]string{"x-name": "caf\xe9", "x-other": "plain"}, <-seen); diff != "" {
			t.Errorf("headers the step saw (-want +got):\n%s", diff)
		}
	})
	t.Run("a path that is not UTF-8 is logged with the request id", func(t *testing.T) {
		req := checkRequest("ns.raw", nil)
		req.Attributes.Request.Http.Id = "req-bad-path"
		req.Attributes.Request.Http.Path = "/cafZ"
		err := check(withBytes(t, req, "cafZ", "caf\xe9"))
		if status.Code(err) != codes.Internal {
			t.Fatalf("Check = %v, want codes.Internal (gRPC's answer to a request it cannot decode)", err)
		}
		// grpc-go writes the Internal status inside RecvMsg, before the handler gets
		// the error and logs it: the client can have its answer before the log line.
		logged := func() bool { return strings.Contains(logs.String(), `"request_id":"req-bad-path"`) }
		for deadline := time.Now().Add(5 * time.Second); !logged() && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if !logged() {
			t.Errorf("the refusal is not logged with the request id; log:\n%s", logs)
		}
	})
}
