package devgateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
)

// DefaultCheckTimeout is the ext_authz call timeout when none is configured (Envoy's
// ext_authz default).
const DefaultCheckTimeout = 200 * time.Millisecond

// Gateway routes HTTP requests the way Envoy does with the ext_authz filter in front
// of the router.
type Gateway struct {
	authz authv3.AuthorizationClient
	log   zerolog.Logger
	table atomic.Pointer[table]
	proxy *httputil.ReverseProxy
}

type ctxKey struct{}

// target is what ServeHTTP hands the reverse proxy: the upstream address and the
// ext_authz response headers for the upstream's response.
type target struct {
	addr        string
	respHeaders []*corev3.HeaderValueOption
}

// New returns a Gateway that asks authz about every request on routes with ext_authz.
func New(authz authv3.AuthorizationClient, log zerolog.Logger) *Gateway {
	g := &Gateway{authz: authz, log: log}
	g.table.Store(&table{clusters: map[string]*upstream{}, timeout: DefaultCheckTimeout})
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = pr.In.Context().Value(ctxKey{}).(target).addr
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		// The response headers go on the upstream's response, so OVERWRITE replaces
		// a header the upstream set, as in Envoy.
		ModifyResponse: func(res *http.Response) error {
			applyHeaders(res.Header, res.Request.Context().Value(ctxKey{}).(target).respHeaders)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn().Err(err).Str("path", r.URL.Path).Msg("upstream request failed")
			applyHeaders(w.Header(), r.Context().Value(ctxKey{}).(target).respHeaders)
			http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
		},
	}
	return g
}

// Update swaps in a new config. A config with errors still replaces the old one with
// what compiled, as Envoy serves the routes it accepted; the errors are returned.
func (g *Gateway) Update(cfg Config) error {
	t, err := compile(cfg)
	g.table.Store(t)
	return err
}

// ServeHTTP matches the route, runs ext_authz if the route has it, and proxies.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := g.table.Load()
	// Envoy matches prefixes on :path as sent, not percent-decoded: "/public%2F.." is
	// not under "/public/".
	rt, ok := t.match(r.Host, r.URL.EscapedPath())
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if r.Header.Get("X-Request-Id") == "" {
		r.Header.Set("X-Request-Id", newRequestID())
	}
	var respHeaders []*corev3.HeaderValueOption
	if rt.authz {
		resp, err := g.check(r, rt, t.timeout)
		if err != nil {
			g.log.Warn().Err(err).Str("route", rt.name).Msg("ext_authz call failed; denying")
			writeDenied(w, http.StatusForbidden, nil, "")
			return
		}
		if resp.GetStatus().GetCode() != int32(code.Code_OK) {
			d := resp.GetDeniedResponse()
			status := int(d.GetStatus().GetCode())
			if status == 0 {
				status = http.StatusForbidden
			}
			writeDenied(w, status, d.GetHeaders(), d.GetBody())
			return
		}
		ok := resp.GetOkResponse()
		applyHeaders(r.Header, ok.GetHeaders())
		for _, h := range ok.GetHeadersToRemove() {
			r.Header.Del(h)
		}
		respHeaders = ok.GetResponseHeadersToAdd()
	}
	for _, h := range rt.removeHd {
		r.Header.Del(h)
	}
	upstream := t.clusters[rt.cluster]
	if upstream == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	g.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, target{addr: upstream.pick(), respHeaders: respHeaders})))
}

func (g *Gateway) check(r *http.Request, rt *route, timeout time.Duration) (*authv3.CheckResponse, error) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	return g.authz.Check(ctx, checkRequest(r, rt.ext))
}

// checkRequest builds the CheckRequest Envoy would send: lower-case headers including
// the pseudo-headers, :path with the query, and the route's context extensions.
func checkRequest(r *http.Request, ext map[string]string) *authv3.CheckRequest {
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
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      peerOf(r.RemoteAddr),
		Destination: peerOf(localAddr(r)),
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id:       r.Header.Get("X-Request-Id"),
			Method:   r.Method,
			Headers:  headers,
			Path:     path,
			Host:     r.Host,
			Scheme:   scheme,
			Protocol: r.Proto,
			Size:     r.ContentLength,
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
