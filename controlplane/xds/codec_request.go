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
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalDeltaRequest(buf.ReadOnlyData(), req)
}

var errInvalidUTF8 = errors.New("proto: initial_resource_versions: string field contains invalid UTF-8")

// unmarshalDeltaRequest is proto.Unmarshal(b, req) with initial_resource_versions
// kept as its entries (keepAnnounced).
func unmarshalDeltaRequest(b []byte, req *discovery.DeltaDiscoveryRequest) error {
	entries, err := countField(b, initialVersionsField)
	if err != nil || entries == 0 {
		return proto.Unmarshal(b, req) // proto says what is wrong, if anything
	}
	var kept []byte
	rest := make([]byte, 0, 256)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num == initialVersionsField && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(b[n:])
			if _, _, err := mapEntryBytes(entry); err != nil {
				return err
			}
			if kept == nil {
				kept = make([]byte, 0, len(b)) // one copy: the entries outlive gRPC's buffer
			}
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

// countField counts the occurrences of field (length-delimited) in b; an error when b
// is not well-formed.
func countField(b []byte, field protowire.Number) (int, error) {
	count := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return 0, protowire.ParseError(m)
		}
		if num == field && typ == protowire.BytesType {
			count++
		}
		b = b[n+m:]
	}
	return count, nil
}
