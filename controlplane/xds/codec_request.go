package xds

import (
	"errors"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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
	kept := make([]byte, 0, end-start)
	rest := make([]byte, 0, len(b)-(end-start))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num == initialVersionsField && typ == protowire.BytesType {
			kept = append(kept, b[:n+m]...)
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	keepAnnounced(req, kept)
	return nil
}

// entriesOf finds the initial_resource_versions entries of the request b, checking each
// as proto would: from the first one's start to the last one's end, and whether no other
// field lies between. An error when b or an entry is not well-formed.
func entriesOf(b []byte) (start, end int, contiguous bool, err error) {
	contiguous = true
	other := false // a field other than an entry since the first entry
	for at := 0; at < len(b); {
		num, typ, n := protowire.ConsumeTag(b[at:])
		if n < 0 {
			return 0, 0, false, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[at+n:])
		if m < 0 {
			return 0, 0, false, protowire.ParseError(m)
		}
		if num == initialVersionsField && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(b[at+n:])
			if _, _, err := mapEntryBytes(entry); err != nil {
				return 0, 0, false, err
			}
			if end == 0 {
				start = at
			} else if other {
				contiguous = false
			}
			end = at + n + m
		} else if end > 0 {
			other = true
		}
		at += n + m
	}
	return start, end, contiguous, nil
}
