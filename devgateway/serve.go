package devgateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
)

// engine serves requests against a table the way Envoy does with the ext_authz filter
// in front of the router.
type engine struct {
	log   zerolog.Logger
	proxy *httputil.ReverseProxy
}

type ctxKey struct{}

// target is what serve hands the reverse proxy: the upstream endpoint and the ext_authz
// response headers for the upstream's response.
type target struct {
	addr        string
	http2       bool
	respHeaders []*corev3.HeaderValueOption
}

func newEngine(log zerolog.Logger) *engine {
	return &engine{log: log, proxy: &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = pr.In.Context().Value(ctxKey{}).(target).addr
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport: newUpstreamTransport(),
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
	}}
}

// serve matches the route, runs ext_authz if the route has it, and proxies. A nil
// table is a listener without a complete config: nothing is served.
func (e *engine) serve(t *table, w http.ResponseWriter, r *http.Request) {
	if t == nil {
		http.Error(w, "no listener config", http.StatusServiceUnavailable)
		return
	}
	// Envoy matches prefixes on :path as sent, not percent-decoded: "/public%2F.." is
	// not under "/public/".
	rt, ok := t.match(r.Host, localAddr(r), r.URL.EscapedPath())
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if r.Header.Get("X-Request-Id") == "" && !t.noRequestID {
		r.Header.Set("X-Request-Id", newRequestID())
	}
	if !e.routeOptions(rt, w, r) {
		return
	}
	var respHeaders []*corev3.HeaderValueOption
	if rt.authz && t.authz != nil {
		var allowed bool
		if respHeaders, allowed = e.authorize(t.authz, rt, w, r); !allowed {
			return
		}
	}
	for _, h := range rt.removeHd {
		r.Header.Del(h)
	}
	up := t.clusters[rt.cluster]
	addr := ""
	if up != nil {
		addr = up.pick()
	}
	if addr == "" {
		http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
		return
	}
	ctx := context.WithValue(r.Context(), ctxKey{}, target{addr: addr, http2: up.http2, respHeaders: respHeaders})
	e.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// jwtMetadataNamespace is where jwt_authn leaves a verified payload (its
// payload_in_metadata key inside), which RBAC principals match.
const jwtMetadataNamespace = "envoy.filters.http.jwt_authn"

// routeOptions runs the filters before ext_authz in their order: extraction, the early
// Lua stage, jwt_authn, rbac. A denial is answered on w and false returned.
func (e *engine) routeOptions(rt *route, w http.ResponseWriter, r *http.Request) bool {
	md := dynMetadata{}
	runExtract(rt.extract, r, md)
	if rt.lua != nil {
		runLua(rt.lua, r, md)
	}
	if rt.jwtReq != "" {
		out, err := verifyJWT(r.Context(), rt.jwt, r)
		if err != nil {
			e.log.Debug().Str("route", rt.name).Str("reason", err.Error()).Msg("jwt_authn denied")
			realm := `Bearer realm="` + scheme(r) + "://" + r.Host + r.URL.EscapedPath() + `"`
			if !errors.Is(err, errJwtMissing) {
				realm += `, error="invalid_token"`
			}
			w.Header().Set("Www-Authenticate", realm)
			writeLocal(w, http.StatusUnauthorized, err.Error())
			return false
		}
		if out.payloadKey != "" {
			md.set(jwtMetadataNamespace, out.payloadKey, out.payload)
		}
	}
	if rt.rbac != nil && !rt.rbac.allows(r, md) {
		writeLocal(w, http.StatusForbidden, rbacDeniedBody)
		return false
	}
	return true
}

// writeLocal answers as Envoy's local replies do: text/plain with the body.
func writeLocal(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// authorize runs the Check. It applies an OK answer's headers to r and returns the
// headers for the response; a denial or a failure is answered on w.
func (e *engine) authorize(f *authzFilter, rt *route, w http.ResponseWriter, r *http.Request) ([]*corev3.HeaderValueOption, bool) {
	resp, err := check(f, r, rt)
	if err != nil {
		if f.failureModeAllow {
			e.log.Warn().Err(err).Str("route", rt.name).Msg("ext_authz call failed; allowing (failure_mode_allow)")
			if f.failureHeader {
				r.Header.Set("X-Envoy-Auth-Failure-Mode-Allowed", "true")
			}
			return nil, true
		}
		e.log.Warn().Err(err).Str("route", rt.name).Msg("ext_authz call failed; denying")
		writeDenied(w, f.statusOnError, nil, "")
		return nil, false
	}
	if resp.GetStatus().GetCode() != int32(code.Code_OK) {
		d := resp.GetDeniedResponse()
		status := int(d.GetStatus().GetCode())
		if status == 0 {
			status = http.StatusForbidden
		}
		writeDenied(w, status, d.GetHeaders(), d.GetBody())
		return nil, false
	}
	ok := resp.GetOkResponse()
	applyHeaders(r.Header, ok.GetHeaders())
	for _, h := range ok.GetHeadersToRemove() {
		r.Header.Del(h)
	}
	return ok.GetResponseHeadersToAdd(), true
}

// upstreamTransport speaks HTTP/1.1 to an upstream, or HTTP/2 with prior knowledge to a
// cluster with explicit HTTP/2 protocol options, as Envoy would.
type upstreamTransport struct{ h1, h2 *http.Transport }

func newUpstreamTransport() *upstreamTransport {
	h1 := http.DefaultTransport.(*http.Transport).Clone()
	h2 := http.DefaultTransport.(*http.Transport).Clone()
	h2.Protocols = new(http.Protocols)
	h2.Protocols.SetUnencryptedHTTP2(true)
	return &upstreamTransport{h1: h1, h2: h2}
}

func (u *upstreamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t, _ := r.Context().Value(ctxKey{}).(target); t.http2 {
		return u.h2.RoundTrip(r)
	}
	return u.h1.RoundTrip(r)
}
