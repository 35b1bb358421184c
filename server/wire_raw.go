package server

import (
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"gatehouse.dev/gatehouse/internal/wirefields"
)

// Field numbers on the path CheckRequest.attributes.request.http, and in HttpRequest.
var httpRequestPath = []protowire.Number{1, 4, 2}

const (
	httpIDField        protowire.Number = 1  // HttpRequest.id
	httpHeadersField   protowire.Number = 3  // HttpRequest.headers, map<string, string>
	httpHeaderMapField protowire.Number = 13 // HttpRequest.header_map, HeaderMap
)

// isUTF8Error reports whether err is protobuf's refusal of a string field that is not
// UTF-8 (it has no sentinel error for it).
func isUTF8Error(err error) bool { return strings.Contains(err.Error(), "invalid UTF-8") }

// rawHeaders rewrites a CheckRequest whose headers map holds bytes that are not UTF-8
// (as a client that is not Envoy may send, or an Envoy that neither sanitises nor
// sets encode_raw_headers) into the header_map form, with every value as raw bytes,
// which is what Envoy sends with encode_raw_headers. Proto strings must be UTF-8;
// bytes need not. It reports false when b is not a well-formed CheckRequest.
func rawHeaders(b []byte) ([]byte, bool) {
	return rewriteAt(b, httpRequestPath, headersToHeaderMap)
}

// rewriteAt applies f to the message at path (field numbers of nested messages).
func rewriteAt(b []byte, path []protowire.Number, f func([]byte) ([]byte, bool)) ([]byte, bool) {
	if len(path) == 0 {
		return f(b)
	}
	out := make([]byte, 0, len(b)+64)
	ok := true
	err := wirefields.Each(b, func(field wirefields.Field) bool {
		if field.Num != path[0] || field.Type != protowire.BytesType {
			out = append(out, field.Raw...)
			return true
		}
		var inner []byte
		if inner, ok = rewriteAt(field.Value, path[1:], f); !ok {
			return false
		}
		out = protowire.AppendTag(out, field.Num, protowire.BytesType)
		out = protowire.AppendBytes(out, inner)
		return true
	})
	if !ok || err != nil {
		return nil, false
	}
	return out, true
}

// headersToHeaderMap moves the entries of HttpRequest.headers into header_map.
func headersToHeaderMap(b []byte) ([]byte, bool) {
	out := make([]byte, 0, len(b)+64)
	var hm []byte
	ok := true
	err := wirefields.Each(b, func(field wirefields.Field) bool {
		if field.Num != httpHeadersField || field.Type != protowire.BytesType {
			out = append(out, field.Raw...)
			return true
		}
		key, value, err := wirefields.StringEntry(field.Value, nil) // raw bytes: no UTF-8 asked
		if ok = err == nil; !ok {
			return false
		}
		var hv []byte
		hv = protowire.AppendTag(hv, 1, protowire.BytesType) // HeaderValue.key
		hv = protowire.AppendBytes(hv, key)
		hv = protowire.AppendTag(hv, 3, protowire.BytesType) // HeaderValue.raw_value
		hv = protowire.AppendBytes(hv, value)
		hm = protowire.AppendTag(hm, 1, protowire.BytesType) // HeaderMap.headers
		hm = protowire.AppendBytes(hm, hv)
		return true
	})
	if !ok || err != nil {
		return nil, false
	}
	if len(hm) > 0 {
		out = protowire.AppendTag(out, httpHeaderMapField, protowire.BytesType)
		out = protowire.AppendBytes(out, hm)
	}
	return out, true
}

// requestID reads attributes.request.http.id from a CheckRequest that may not decode,
// so that even a request refused at decoding is logged with its id ("" if none).
func requestID(b []byte) string {
	var id string
	rewriteAt(b, httpRequestPath, func(http []byte) ([]byte, bool) {
		_ = wirefields.Each(http, func(field wirefields.Field) bool { // up to a broken field
			if field.Num == httpIDField && field.Type == protowire.BytesType {
				id = strings.ToValidUTF8(string(field.Value), "\uFFFD")
			}
			return true
		})
		return nil, true
	})
	return id
}
