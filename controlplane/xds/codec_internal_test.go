package xds

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestResponseCodecIsProtoMarshal holds the pieces responseCodec hands gRPC to the
// bytes proto.Marshal gives, for responses of both kinds with large resources among
// small ones and every field of the messages around them set, and checks that a large
// resource's bytes are referenced, not copied.
func TestResponseCodecIsProtoMarshal(t *testing.T) {
	large := func(b byte) *anypb.Any {
		return &anypb.Any{TypeUrl: RouteType, Value: bytes.Repeat([]byte{b}, inPlace+int(b))}
	}
	small := &anypb.Any{TypeUrl: ClusterType, Value: []byte("\x0a\x03abc")}
	noURL := &anypb.Any{Value: bytes.Repeat([]byte{7}, 3*inPlace)}
	meta, err := structpb.NewStruct(map[string]any{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	cp := &core.ControlPlane{Identifier: "gatehouse"}
	delta := &discovery.DeltaDiscoveryResponse{
		SystemVersionInfo: "v-3", TypeUrl: RouteType, Nonce: "17", RemovedResources: []string{"gone-1", "gone-2"},
		ControlPlane: cp,
		Resources: []*discovery.Resource{
			{Name: "small", Version: "a", Resource: small},
			{Name: "big", Version: "b", Resource: large(1), Aliases: []string{"x", "y"}, Ttl: durationpb.New(5e9),
				CacheControl: &discovery.Resource_CacheControl{DoNotCache: true}, Metadata: &core.Metadata{FilterMetadata: map[string]*structpb.Struct{"f": meta}}},
			{Name: "big-2", Resource: large(2)},
			{Name: "no-url", Version: "c", Resource: noURL},
			{Name: "small-2", Version: "d", Resource: small},
		},
	}
	sotw := &discovery.DiscoveryResponse{
		VersionInfo: "v-4", TypeUrl: RouteType, Nonce: "18", Canary: true, ControlPlane: cp,
		Resources: []*anypb.Any{small, large(3), noURL, small, large(4)},
	}
	c := newResponseCodec()
	for name, m := range map[string]proto.Message{"delta": delta, "state of the world": sotw} {
		t.Run(name, func(t *testing.T) {
			got, err := c.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Materialize(), want) {
				t.Fatalf("the pieces joined (%d bytes) are not proto.Marshal's %d bytes", got.Len(), len(want))
			}
			referenced := 0
			for _, b := range got {
				if d := b.ReadOnlyData(); len(d) >= inPlace {
					referenced++
					if !isValueOf(d, m) {
						t.Errorf("a piece of %d bytes is not the bytes of a resource", len(d))
					}
				}
			}
			if referenced != 3 {
				t.Errorf("%d large pieces, want the 3 large resources' own bytes", referenced)
			}
		})
	}
}

// isValueOf says whether d is the very value (same memory) of one of m's resources.
func isValueOf(d []byte, m proto.Message) bool {
	var values [][]byte
	switch m := m.(type) {
	case *discovery.DeltaDiscoveryResponse:
		for _, r := range m.GetResources() {
			values = append(values, r.GetResource().GetValue())
		}
	case *discovery.DiscoveryResponse:
		for _, a := range m.GetResources() {
			values = append(values, a.GetValue())
		}
	}
	for _, v := range values {
		if len(v) == len(d) && unsafe.SliceData(v) == unsafe.SliceData(d) {
			return true
		}
	}
	return false
}

// TestResponseCodecLeavesTheRestToGRPC: responses without a large resource, and every
// other message, are gRPC's proto codec's one piece; a large resource with unknown
// fields is not split either.
func TestResponseCodecLeavesTheRestToGRPC(t *testing.T) {
	odd := &anypb.Any{TypeUrl: RouteType, Value: make([]byte, inPlace)}
	odd.ProtoReflect().SetUnknown([]byte{0x18, 0x01}) // field 3, varint 1
	for _, m := range []proto.Message{
		&discovery.DeltaDiscoveryResponse{TypeUrl: ClusterType, Resources: []*discovery.Resource{{Name: "a", Resource: &anypb.Any{Value: make([]byte, inPlace-1)}}}},
		&discovery.DiscoveryResponse{Resources: []*anypb.Any{odd}},
		&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType, ResourceNamesSubscribe: []string{"*"}},
	} {
		got, err := newResponseCodec().Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := proto.Marshal(m)
		if len(got) != 1 || !bytes.Equal(got.Materialize(), want) {
			t.Errorf("%T: %d pieces, want gRPC's one piece of proto.Marshal's bytes", m, len(got))
		}
		got.Free()
	}
	var out discovery.DeltaDiscoveryRequest
	if err := newResponseCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte("\x12\x03abc"))}, &out); err != nil || out.GetTypeUrl() != "abc" {
		t.Errorf("Unmarshal: %v, type URL %q", err, out.GetTypeUrl())
	}
	if got := newResponseCodec().Name(); !strings.EqualFold(got, "proto") {
		t.Errorf("Name() = %q, want proto", got)
	}
}
