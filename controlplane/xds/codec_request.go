package xds

import (
	"errors"
	"unicode/utf8"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// initialVersionsField is DeltaDiscoveryRequest.initial_resource_versions, a map of
// name to version: a client reconnecting announces every resource it holds there.
const initialVersionsField = 5

// Unmarshal decodes as gRPC's proto codec does, except a delta request's
// initial_resource_versions: proto decodes a map through reflection into a map that
// grows entry by entry, which made decoding what hundreds of reconnecting clients
// announce (10,000 entries each) most of a restart's work. Here those entries are
// counted, the map is made that size, and each is decoded straight into it; the rest
// of the request goes through proto. The result is what proto.Unmarshal gives
// (TestRequestDecodingIsProtoUnmarshal).
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
// decoded by hand.
func unmarshalDeltaRequest(b []byte, req *discovery.DeltaDiscoveryRequest) error {
	entries, err := countField(b, initialVersionsField)
	if err != nil || entries == 0 {
		return proto.Unmarshal(b, req) // proto says what is wrong, if anything
	}
	versions := make(map[string]string, entries)
	rest := make([]byte, 0, 256)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num == initialVersionsField && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(b[n:])
			key, value, err := mapEntry(entry)
			if err != nil {
				return err
			}
			versions[key] = value
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	req.InitialResourceVersions = versions
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

// mapEntry decodes a map<string, string> entry: key 1, value 2, each "" when absent,
// the last one when repeated; other fields are skipped, as proto skips them.
func mapEntry(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", protowire.ParseError(n)
		}
		b = b[n:]
		if (num == 1 || num == 2) && typ == protowire.BytesType {
			s, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return "", "", protowire.ParseError(m)
			}
			if !utf8.Valid(s) {
				return "", "", errInvalidUTF8
			}
			if num == 1 {
				key = string(s)
			} else {
				value = string(s)
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return "", "", protowire.ParseError(m)
		}
		b = b[m:]
	}
	return key, value, nil
}
