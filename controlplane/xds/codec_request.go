package xds

import (
	"errors"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/internal/wirefields"
)

// initialVersionsField is DeltaDiscoveryRequest.initial_resource_versions, a map of
// name to version: a client reconnecting announces every resource it holds there.
const initialVersionsField = 5

// Unmarshal decodes as gRPC's proto codec does, except a delta request's
// initial_resource_versions: a reconnecting client announces every resource it holds
// there, and decoding hundreds of such maps (10,000 entries each) into maps was most of
// a restart's work. Here the entries are checked as proto checks them and kept as they
// came, among the request's unknown fields, for the delta set (takeAnnounced); the rest
// of the request goes through proto. With the entries put back into the map, the
// result is what proto.Unmarshal gives (TestRequestDecodingIsProtoUnmarshal).
func (c responseCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*discovery.DeltaDiscoveryRequest)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	if data.Len() > ownedAbove {
		// A request this large is mostly what the client announces, which is kept: it
		// keeps pointing into a buffer of its own rather than being copied out.
		return unmarshalDeltaRequest(data.Materialize(), req, true)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalDeltaRequest(buf.ReadOnlyData(), req, false)
}

// ownedAbove is the size past which a delta request is decoded from a buffer of its own.
const ownedAbove = 16 << 10

var errInvalidUTF8 = errors.New("proto: initial_resource_versions: string field contains invalid UTF-8")

// unmarshalDeltaRequest is proto.Unmarshal(b, req) with initial_resource_versions
// kept as its entries (keepAnnounced). owned says b is the request's own (not reused
// once decoded): entries written one after another, as a client's encoder writes
// them, are then kept where they are.
func unmarshalDeltaRequest(b []byte, req *discovery.DeltaDiscoveryRequest, owned bool) error {
	start, end, contiguous, err := entriesOf(b)
	if err != nil || start == end {
		return proto.Unmarshal(b, req) // proto says what is wrong, if anything
	}
	if contiguous {
		if err := proto.Unmarshal(b[:start], req); err != nil {
			return err
		}
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b[end:], req); err != nil {
			return err
		}
		kept := b[start:end:end]
		if !owned {
			kept = append([]byte(nil), kept...)
		}
		keepAnnounced(req, kept)
		return nil
	}
	kept, rest := splitAnnounced(b, make([]byte, 0, end-start), make([]byte, 0, len(b)-(end-start)))
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	keepAnnounced(req, kept)
	return nil
}

// splitAnnounced appends the initial_resource_versions entries of the well-formed b to
// kept and every other field to rest, each as it was.
func splitAnnounced(b, kept, rest []byte) ([]byte, []byte) {
	_ = wirefields.Each(b, func(f wirefields.Field) bool {
		if f.Num == initialVersionsField && f.Type == protowire.BytesType {
			kept = append(kept, f.Raw...)
		} else {
			rest = append(rest, f.Raw...)
		}
		return true
	})
	return kept, rest
}

// entriesOf finds the initial_resource_versions entries of the request b, checking each
// as proto would: from the first one's start to the last one's end, and whether no other
// field lies between. An error when b or an entry is not well-formed.
func entriesOf(b []byte) (start, end int, contiguous bool, err error) {
	contiguous = true
	other := false // a field other than an entry since the first entry
	at := 0
	var entryErr error
	err = wirefields.Each(b, func(f wirefields.Field) bool {
		if f.Num == initialVersionsField && f.Type == protowire.BytesType {
			if _, _, entryErr = mapEntryBytes(f.Value); entryErr != nil {
				return false
			}
			if end == 0 {
				start = at
			} else if other {
				contiguous = false
			}
			end = at + len(f.Raw)
		} else if end > 0 {
			other = true
		}
		at += len(f.Raw)
		return true
	})
	if err = errors.Join(err, entryErr); err != nil {
		return 0, 0, false, err
	}
	return start, end, contiguous, nil
}
