package devgateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
)

func check(f *authzFilter, r *http.Request, rt *route) (*authv3.CheckResponse, error) {
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
	defer cancel()
	return f.client.Check(ctx, checkRequest(r, rt.ext, f.rawHeaders))
}

// checkRequest builds the CheckRequest Envoy would send: lower-case headers including
// the pseudo-headers, :path with the query, and the route's context extensions. With
// raw, the headers go in header_map as Envoy's encode_raw_headers sends them: key and
// raw_value only, one entry per header line (repeated headers are not joined), and the
// headers map stays empty.
func checkRequest(r *http.Request, ext map[string]string, raw bool) *authv3.CheckRequest {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.URL.RequestURI()
	headers := make(map[string]string, len(r.Header)+4)
	for k, vs := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	headers[":authority"] = r.Host
	headers[":method"] = r.Method
	headers[":path"] = path
	headers[":scheme"] = scheme
	var headerMap *corev3.HeaderMap
	if raw {
		headerMap = &corev3.HeaderMap{}
		for _, k := range []string{":authority", ":method", ":path", ":scheme"} {
			headerMap.Headers = append(headerMap.Headers, &corev3.HeaderValue{Key: k, RawValue: []byte(headers[k])})
		}
		for _, k := range slices.Sorted(maps.Keys(r.Header)) {
			for _, v := range r.Header[k] {
				headerMap.Headers = append(headerMap.Headers, &corev3.HeaderValue{Key: strings.ToLower(k), RawValue: []byte(v)})
			}
		}
		headers = nil
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      peerOf(r.RemoteAddr),
		Destination: peerOf(localAddr(r)),
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id:        r.Header.Get("X-Request-Id"),
			Method:    r.Method,
			Headers:   headers,
			HeaderMap: headerMap,
			Path:      path,
			Host:      r.Host,
			Scheme:    scheme,
			Protocol:  r.Proto,
			Size:      r.ContentLength,
		}},
		ContextExtensions: ext,
	}}
}

func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
}

func peerOf(addr string) *authv3.AttributeContext_Peer {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	p, _ := strconv.Atoi(port)
	return &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
		SocketAddress: &corev3.SocketAddress{Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(p)}},
	}}}
}

// applyHeaders applies Envoy header options: overwrite or add, append, or add if absent.
func applyHeaders(h http.Header, opts []*corev3.HeaderValueOption) {
	for _, o := range opts {
		k, v := o.GetHeader().GetKey(), o.GetHeader().GetValue()
		switch o.GetAppendAction() {
		case corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD:
			h.Add(k, v)
		case corev3.HeaderValueOption_ADD_IF_ABSENT:
			if h.Get(k) == "" {
				h.Set(k, v)
			}
		default:
			h.Set(k, v)
		}
	}
}

// writeDenied sends a denied response. Every header option is added, so a step can
// set several cookies at once.
func writeDenied(w http.ResponseWriter, status int, headers []*corev3.HeaderValueOption, body string) {
	for _, o := range headers {
		w.Header().Add(o.GetHeader().GetKey(), o.GetHeader().GetValue())
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
