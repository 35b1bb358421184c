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
			got := marshalAsProto(t, c, m)
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

// TestManyResourcesAreSharedRecords: a delta response with many resources is sent as
// the records of its small ones that a set offered, made once per *discovery.Resource
// and shared by every response that carries it, and still joins to proto.Marshal's
// bytes; a Resource not offered is copied; a record goes once its set forgets it.
func TestManyResourcesAreSharedRecords(t *testing.T) {
	c := newResponseCodec()
	shared := make([]*discovery.Resource, manyFrom)
	for i := range shared {
		shared[i] = &discovery.Resource{Name: "r-" + strings.Repeat("x", i), Version: "v", Resource: &anypb.Any{TypeUrl: ClusterType, Value: []byte{0x0a, byte(i)}}}
		c.records.offer(shared[i])
	}
	notOffered := &discovery.Resource{Name: "not-offered", Resource: &anypb.Any{TypeUrl: ClusterType, Value: []byte{0x0a, 0x01}}}
	big := &discovery.Resource{Name: "big", Resource: &anypb.Any{TypeUrl: RouteType, Value: make([]byte, inPlace)}}
	response := func(nonce string, extra ...*discovery.Resource) *discovery.DeltaDiscoveryResponse {
		return &discovery.DeltaDiscoveryResponse{SystemVersionInfo: "v-1", TypeUrl: ClusterType, Nonce: nonce, RemovedResources: []string{"gone"},
			Resources: append(append([]*discovery.Resource(nil), shared...), extra...)}
	}
	a, b := marshalAsProto(t, c, response("1", notOffered)), marshalAsProto(t, c, response("2", big, notOffered))
	same := 0
	for _, x := range a {
		for _, y := range b {
			if dx, dy := x.ReadOnlyData(), y.ReadOnlyData(); len(dx) > 0 && len(dx) == len(dy) && unsafe.SliceData(dx) == unsafe.SliceData(dy) {
				same++
			}
		}
	}
	if same != len(shared) {
		t.Errorf("%d pieces of the two responses are the same memory, want each of the %d offered resources' records", same, len(shared))
	}
	made := func() int {
		c.records.mu.RLock()
		defer c.records.mu.RUnlock()
		n := 0
		for _, r := range append(shared, notOffered, big) {
			if c.records.m[r] != nil {
				n++
			}
		}
		return n
	}
	if n := made(); n != len(shared) {
		t.Errorf("%d records made, want %d (the large resource is sent in place, the one not offered copied)", n, len(shared))
	}
	for _, r := range shared {
		c.records.forget(r)
	}
	if n := made(); n != 0 {
		t.Errorf("%d records kept after they were forgotten", n)
	}
}

// TestASetForgetsTheRecordsOfWhatItNoLongerServes: the Resource a set sends a version
// in is offered for a shared record until that resource changes or goes.
func TestASetForgetsTheRecordsOfWhatItNoLongerServes(t *testing.T) {
	ds := newDeltaSet(ClusterType, "p-", nil)
	put := func(port int) {
		t.Helper()
		sv, err := newServed(ClusterType, "a", endpoints("a", port))
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.update(map[string]wireResource{"a": sv.wireResource()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	offered := func(r *discovery.Resource) bool {
		sharedRecords.mu.RLock()
		defer sharedRecords.mu.RUnlock()
		_, ok := sharedRecords.m[r]
		return ok
	}
	put(9000)
	first, err := ds.wire("a")
	if err != nil || !offered(first) {
		t.Fatalf("wire: %v; offered %t", err, offered(first))
	}
	put(9001)
	second, err := ds.wire("a")
	if err != nil || offered(first) || !offered(second) {
		t.Fatalf("after an edit: %v; the old version offered %t, the new %t", err, offered(first), offered(second))
	}
	if err := ds.update(nil, []string{"a"}); err != nil || offered(second) {
		t.Fatalf("after a removal: %v; offered %t", err, offered(second))
	}
}

// marshalAsProto is c's pieces of m, which must join to the bytes proto.Marshal gives.
func marshalAsProto(t *testing.T, c responseCodec, m proto.Message) mem.BufferSlice {
	t.Helper()
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
	return got
}
