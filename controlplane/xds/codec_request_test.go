package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// TestRequestDecodingIsProtoUnmarshal decodes random delta requests, and hand-made
// odd ones, both ways: what unmarshalDeltaRequest gives, with the announced entries it
// kept put back into the map, is what proto.Unmarshal gives, and it fails where proto
// fails.
func TestRequestDecodingIsProtoUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	word := func() string {
		return []string{"", "a", "bench.svc-00017", "ünïcode", "0e886e62953779161ba7de8d52820ae696165464ffb60097a1eb6b33721dcb9d"}[rng.IntN(5)] + fmt.Sprint(rng.IntN(50))
	}
	var inputs [][]byte
	for range 300 {
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: word(), ResponseNonce: word()}
		if rng.IntN(2) == 0 {
			req.Node = &core.Node{Id: word(), Cluster: word()}
		}
		for range rng.IntN(4) {
			req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, word())
		}
		for range rng.IntN(3) {
			req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, word())
		}
		if n := rng.IntN(40); n > 0 {
			req.InitialResourceVersions = map[string]string{}
			for range n {
				req.InitialResourceVersions[word()] = word()
			}
		}
		if rng.IntN(5) == 0 {
			req.ErrorDetail = &rpcstatus.Status{Code: 3, Message: word()}
		}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	entry := func(fields ...[]byte) []byte {
		var e []byte
		for _, f := range fields {
			e = append(e, f...)
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, initialVersionsField, protowire.BytesType), e)
	}
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	typeURL := str(2, ExtAuthConfigType)
	odd := map[string][]byte{
		"a key twice, the last wins":    append(append(typeURL, entry(str(1, "k"), str(2, "v1"))...), entry(str(1, "k"), str(2, "v2"))...),
		"no key":                        entry(str(2, "v")),
		"no value":                      entry(str(1, "k")),
		"an empty entry":                entry(),
		"a field repeated in an entry":  entry(str(1, "k"), str(1, "k2"), str(2, "v")),
		"an unknown field in an entry":  entry(str(1, "k"), protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 7), str(2, "v")),
		"the field as a varint":         append(protowire.AppendVarint(protowire.AppendTag(nil, initialVersionsField, protowire.VarintType), 1), entry(str(1, "k"))...),
		"an unknown field":              append(entry(str(1, "k")), protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1)...),
		"another field between entries": append(append(entry(str(1, "a"), str(2, "1")), str(6, "nonce")...), entry(str(1, "b"), str(2, "2"))...),
		"entries before the type":       append(entry(str(1, "a"), str(2, "1")), typeURL...),
		"invalid UTF-8 in a key":        entry(str(1, "k\xff"), str(2, "v")),
		"invalid UTF-8 in a value":      entry(str(1, "k"), str(2, "v\xfe")),
		"cut short":                     entry(str(1, "key"), str(2, "value"))[:9],
		"a bad length":                  append(protowire.AppendTag(nil, initialVersionsField, protowire.BytesType), 0x7f, 1),
	}
	for name, b := range odd {
		t.Run(name, func(t *testing.T) { compareDecoding(t, b) })
	}
	for i, b := range inputs {
		t.Run(fmt.Sprint("random ", i), func(t *testing.T) { compareDecoding(t, b) })
	}
}

func compareDecoding(t *testing.T, b []byte) {
	t.Helper()
	for _, owned := range []bool{false, true} {
		compareDecodingOwned(t, slices.Clone(b), owned)
	}
}

func compareDecodingOwned(t *testing.T, b []byte, owned bool) {
	t.Helper()
	want, got := &discovery.DeltaDiscoveryRequest{}, &discovery.DeltaDiscoveryRequest{}
	wantErr := proto.Unmarshal(b, want)
	gotErr := unmarshalDeltaRequest(b, got, owned)
	if !owned {
		clear(b) // a buffer gRPC reuses: nothing decoded may point into it
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("proto: %v; here: %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if a := takeAnnounced(got); a != nil {
		got.InitialResourceVersions = a.versions()
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("decoded (-proto +here):\n%s", d)
	}
}
