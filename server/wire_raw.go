package server

import (
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
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
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, false
		}
		if num == path[0] && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n : n+m])
			inner, ok := rewriteAt(v, path[1:], f)
			if !ok {
				return nil, false
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, inner)
		} else {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out, true
}

// headersToHeaderMap moves the entries of HttpRequest.headers into header_map.
func headersToHeaderMap(b []byte) ([]byte, bool) {
	out := make([]byte, 0, len(b)+64)
	var hm []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, false
		}
		if num == httpHeadersField && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(b[n : n+m])
			key, value, ok := mapEntry(entry)
			if !ok {
				return nil, false
			}
			var hv []byte
			hv = protowire.AppendTag(hv, 1, protowire.BytesType) // HeaderValue.key
			hv = protowire.AppendBytes(hv, key)
			hv = protowire.AppendTag(hv, 3, protowire.BytesType) // HeaderValue.raw_value
			hv = protowire.AppendBytes(hv, value)
			hm = protowire.AppendTag(hm, 1, protowire.BytesType) // HeaderMap.headers
			hm = protowire.AppendBytes(hm, hv)
		} else {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if len(hm) > 0 {
		out = protowire.AppendTag(out, httpHeaderMapField, protowire.BytesType)
		out = protowire.AppendBytes(out, hm)
	}
	return out, true
}

// mapEntry reads the key (1) and value (2) of a map<string, string> entry.
func mapEntry(b []byte) (key, value []byte, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, nil, false
		}
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, _ := protowire.ConsumeBytes(b[n : n+m])
			if num == 1 {
				key = v
			} else {
				value = v
			}
		}
		b = b[n+m:]
	}
	return key, value, true
}

// requestID reads attributes.request.http.id from a CheckRequest that may not decode,
// so that even a request refused at decoding is logged with its id ("" if none).
func requestID(b []byte) string {
	var id string
	rewriteAt(b, httpRequestPath, func(http []byte) ([]byte, bool) {
		for len(http) > 0 {
			num, typ, n := protowire.ConsumeTag(http)
			if n < 0 {
				break
			}
			m := protowire.ConsumeFieldValue(num, typ, http[n:])
			if m < 0 {
				break
			}
			if num == httpIDField && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(http[n : n+m])
				id = strings.ToValidUTF8(string(v), "\uFFFD")
			}
			http = http[n+m:]
		}
		return nil, true
	})
	return id
}
