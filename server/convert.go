package server

import (
	"net/http"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/pluginapi"
)

// authorizationRequest copies what steps need out of a CheckRequest. The headers map
// is Envoy's own (already lower-case), so no copy is made.
// raw is the request's wire encoding when the caller kept it; nil re-encodes req.
func authorizationRequest(req *authv3.CheckRequest, raw []byte) *pluginapi.AuthorizationRequest {
	attrs := req.GetAttributes()
	h := attrs.GetRequest().GetHttp()
	headers := h.GetHeaders()
	if len(headers) == 0 && h.GetHeaderMap() != nil {
		headers = headerMap(h.GetHeaderMap())
	}
	if headers == nil {
		headers = make(map[string]string)
	}
	body := h.GetRawBody()
	if len(body) == 0 && h.GetBody() != "" {
		body = []byte(h.GetBody())
	}
	if raw == nil {
		raw, _ = proto.Marshal(req) // a CheckRequest we just decoded always re-encodes
	}
	return &pluginapi.AuthorizationRequest{
		Method:            h.GetMethod(),
		Path:              h.GetPath(),
		Host:              h.GetHost(),
		Scheme:            h.GetScheme(),
		Protocol:          h.GetProtocol(),
		Headers:           headers,
		Body:              body,
		ContextExtensions: attrs.GetContextExtensions(),
		Source:            peer(attrs.GetSource()),
		Destination:       peer(attrs.GetDestination()),
		RequestID:         h.GetId(),
		RawCheckRequest:   raw,
	}
}

// headerMap flattens Envoy's header_map form (sent when encode_raw_headers is on),
// joining repeated headers with "," as the headers map form does.
func headerMap(hm *corev3.HeaderMap) map[string]string {
	out := make(map[string]string, len(hm.GetHeaders()))
	for _, hv := range hm.GetHeaders() {
		v := hv.GetValue()
		if raw := hv.GetRawValue(); len(raw) > 0 {
			v = string(raw)
		}
		if old, ok := out[hv.GetKey()]; ok {
			v = old + "," + v
		}
		out[hv.GetKey()] = v
	}
	return out
}

func peer(p *authv3.AttributeContext_Peer) pluginapi.Peer {
	sa := p.GetAddress().GetSocketAddress()
	var addr string
	if sa != nil {
		addr = hostPort(sa.GetAddress(), sa.GetPortValue())
	}
	return pluginapi.Peer{Address: addr, Principal: p.GetPrincipal()}
}

// hostPort is net.JoinHostPort(host, port) in one allocation instead of three: it
// runs twice for every Check.
func hostPort(host string, port uint32) string {
	var buf [64]byte
	b := buf[:0]
	v6 := strings.IndexByte(host, ':') >= 0
	if v6 {
		b = append(b, '[')
	}
	b = append(b, host...)
	if v6 {
		b = append(b, ']')
	}
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(port), 10)
	return string(b)
}

var okStatus = &rpcstatus.Status{Code: int32(code.Code_OK)}

// okAnswer and deniedAnswer are the messages of one answer in one allocation (three
// and five of them otherwise, for every Check). gRPC only reads them, while encoding.
type okAnswer struct {
	resp  authv3.CheckResponse
	oneof authv3.CheckResponse_OkResponse
	ok    authv3.OkHttpResponse
}

type deniedAnswer struct {
	resp   authv3.CheckResponse
	status rpcstatus.Status
	oneof  authv3.CheckResponse_DeniedResponse
	denied authv3.DeniedHttpResponse
	http   typev3.HttpStatus
}

// checkResponse turns a step decision into Envoy's answer.
func checkResponse(r *pluginapi.AuthorizationResponse) *authv3.CheckResponse {
	if r.Allowed {
		a := new(okAnswer)
		ok := &a.ok
		ok.HeadersToRemove = r.RemoveRequestHeaders
		ok.Headers = appendHeaders(ok.Headers, r.RequestHeaders, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)
		ok.Headers = appendHeaders(ok.Headers, r.AppendRequestHeaders, corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD)
		ok.ResponseHeadersToAdd = appendHeaders(nil, r.ResponseHeaders, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)
		ok.ResponseHeadersToAdd = appendHeaderValues(ok.ResponseHeadersToAdd, r.ResponseHeaderValues)
		a.oneof.OkResponse = ok
		a.resp.Status, a.resp.HttpResponse = okStatus, &a.oneof
		return &a.resp
	}
	st := r.StatusCode()
	a := new(deniedAnswer)
	a.status.Code = int32(rpcCode(st))
	a.http.Code = typev3.StatusCode(st)
	a.denied.Status = &a.http
	a.denied.Headers = appendHeaderValues(appendHeaders(nil, r.ResponseHeaders, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD), r.ResponseHeaderValues)
	a.denied.Body = r.Body
	a.oneof.DeniedResponse = &a.denied
	a.resp.Status, a.resp.HttpResponse = &a.status, &a.oneof
	return &a.resp
}

func rpcCode(httpStatus int) code.Code {
	switch {
	case httpStatus == http.StatusUnauthorized:
		return code.Code_UNAUTHENTICATED
	case httpStatus >= 500:
		return code.Code_UNAVAILABLE
	}
	return code.Code_PERMISSION_DENIED
}

func appendHeaders(dst []*corev3.HeaderValueOption, hs map[string]string, action corev3.HeaderValueOption_HeaderAppendAction) []*corev3.HeaderValueOption {
	for k, v := range hs {
		dst = append(dst, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: k, Value: v},
			AppendAction: action,
		})
	}
	return dst
}

// appendHeaderValues adds one header line per value (repeatable headers such as Set-Cookie).
func appendHeaderValues(dst []*corev3.HeaderValueOption, hs map[string][]string) []*corev3.HeaderValueOption {
	for k, vs := range hs {
		for _, v := range vs {
			dst = append(dst, &corev3.HeaderValueOption{
				Header:       &corev3.HeaderValue{Key: k, Value: v},
				AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
			})
		}
	}
	return dst
}
