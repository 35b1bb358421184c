package devgateway_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/devgateway"
)

func okResponse(headers ...*corev3.HeaderValueOption) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status:       &rpcstatus.Status{Code: int32(code.Code_OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{Headers: headers}},
	}
}

func deniedResponse(status int, body string, headers ...*corev3.HeaderValueOption) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(code.Code_PERMISSION_DENIED)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode(status)}, Headers: headers, Body: body,
		}},
	}
}

func hvo(k, v string, action corev3.HeaderValueOption_HeaderAppendAction) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, Value: v}, AppendAction: action}
}

const (
	overwrite = corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
	appendTo  = corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD
	ifAbsent  = corev3.HeaderValueOption_ADD_IF_ABSENT
)

// Route and cluster builders, in the shape translate.ToEnvoy produces.

func vhost(name string, domains []string, routes ...*routev3.Route) *routev3.VirtualHost {
	return &routev3.VirtualHost{Name: name, Domains: domains, Routes: routes}
}

func perRoute(t *testing.T, per *extauthzv3.ExtAuthzPerRoute) map[string]*anypb.Any {
	a, err := anypb.New(per)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*anypb.Any{devgateway.ExtAuthzFilterName: a}
}

// authzRoute sends prefix to cluster with ext_authz and the given context extensions.
func authzRoute(t *testing.T, prefix, cluster string, ext map[string]string, remove ...string) *routev3.Route {
	return &routev3.Route{
		Name:                   prefix,
		Match:                  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: prefix}},
		Action:                 &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster}}},
		TypedPerFilterConfig:   perRoute(t, &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: ext}}}),
		RequestHeadersToRemove: remove,
	}
}

// openRoute sends prefix to cluster with ext_authz disabled.
func openRoute(t *testing.T, prefix, cluster string) *routev3.Route {
	r := authzRoute(t, prefix, cluster, nil)
	r.TypedPerFilterConfig = perRoute(t, &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_Disabled{Disabled: true}})
	return r
}

func cluster(t *testing.T, name string, addrs ...string) *clusterv3.Cluster {
	var lbs []*endpointv3.LbEndpoint
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		lbs = append(lbs, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
				Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(p)},
			}}},
		}}})
	}
	return &clusterv3.Cluster{Name: name, LoadAssignment: &endpointv3.ClusterLoadAssignment{
		ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}},
	}}
}

// gwConfig is what a test serves: a route configuration and its clusters behind the
// "http" listener, whose ext_authz filter checks with a real gRPC server.
type gwConfig struct {
	Routes   *routev3.RouteConfiguration
	Clusters []*clusterv3.Cluster
	// CheckTimeout is the ext_authz filter's timeout (DefaultCheckTimeout when zero).
	CheckTimeout time.Duration
	// RawHeaders turns on the filter's encode_raw_headers.
	RawHeaders bool
}

// startGateway serves cfg through a Proxy fed over Handle, on a loopback port, with
// authz (one answering OK when nil) as the ext_authz server. Hosts match without their
// port (strip_any_host_port), as in what the control plane emits. It returns the URL.
func startGateway(t *testing.T, authz *authzServer, cfg gwConfig) string {
	t.Helper()
	p, url := newProxy(t)
	feed(t, p, gatewayResources(t, authz, cfg, false)...)
	return url
}

// gatewayResources are cfg's listener (plain text, or TLS with one certificate for every
// server name), its route configuration "http", its clusters and the ext_authz cluster.
func gatewayResources(t *testing.T, authz *authzServer, cfg gwConfig, tls bool) []types.Resource {
	t.Helper()
	if authz == nil {
		authz = &authzServer{}
	}
	timeout := cfg.CheckTimeout
	if timeout == 0 {
		timeout = devgateway.DefaultCheckTimeout
	}
	filter := extAuthzFilter(t, "gatehouse.extauth", timeout)
	if cfg.RawHeaders {
		var e extauthzv3.ExtAuthz
		if err := filter.GetTypedConfig().UnmarshalTo(&e); err != nil {
			t.Fatal(err)
		}
		e.EncodeRawHeaders = true
		filter.ConfigType = &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &e)}
	}
	h := hcm(t, "http", filter, routerFilter(t))
	h.StripPortMode = &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true}
	l := listenerWith(t, "http", devgateway.HTTPPort, h)
	if tls {
		l = listenerWith(t, "https", devgateway.HTTPSPort, h)
		l.FilterChains[0].TransportSocket = downstreamTLS(t, "cert", nil)
	}
	rc := proto.Clone(cfg.Routes).(*routev3.RouteConfiguration)
	rc.Name = "http"
	authzCluster := cluster(t, "gatehouse.extauth", startAuthz(t, authz))
	authzCluster.TypedExtensionProtocolOptions = http2Cluster(t, "").TypedExtensionProtocolOptions
	res := []types.Resource{l, rc, authzCluster}
	for _, c := range cfg.Clusters {
		res = append(res, c)
	}
	return res
}

// serve sends one request to the gateway at url with the Host of target.
func serve(t *testing.T, url, method, target string, header http.Header) *http.Response {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := do(t, method, url+u.RequestURI(), u.Host, header)
	return resp
}

func TestRouting(t *testing.T) {
	// Every route asks ext_authz, which records the route and denies: the matched
	// route is the one whose context extension the fake saw.
	route := func(name, prefix string) *routev3.Route {
		return authzRoute(t, prefix, "c", map[string]string{"route": name})
	}
	cfg := gwConfig{
		Clusters: []*clusterv3.Cluster{cluster(t, "c", "127.0.0.1:1")},
		Routes: &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{
			vhost("any", []string{"*"}, route("any", "/")),
			vhost("prefix", []string{"api.*"}, route("prefix", "/")),
			vhost("suffix", []string{"*.example.com"}, route("suffix", "/")),
			vhost("longer-suffix", []string{"*.api.example.com"}, route("longer-suffix", "/")),
			vhost("exact", []string{"api.example.com", "other.example.com"},
				route("exact-v1", "/api/v1"),
				route("exact-api", "/api"),
				route("exact-root", "/"),
				route("exact-shadowed", "/api/v2"),
			),
		}},
	}
	tests := []struct {
		host, path string
		want       string // the route; "" for a 404
	}{
		{"api.example.com", "/", "exact-root"},
		{"other.example.com", "/", "exact-root"},
		{"API.Example.COM:8080", "/", "exact-root"},
		{"www.example.com", "/", "suffix"},
		{"x.api.example.com", "/", "longer-suffix"},
		{"api.foo.example.com", "/", "suffix"}, // suffix beats prefix
		{"api.other.org:443", "/", "prefix"},
		{"example.com", "/", "any"}, // "*.example.com" needs at least one character
		{"api.", "/", "any"},        // so does "api.*"
		{"elsewhere.net", "/", "any"},
		{"[::1]:8080", "/", "any"},
		{"api.example.com", "/api/v1/items", "exact-v1"},
		{"api.example.com", "/api/v2/items", "exact-api"}, // the first match wins
		{"api.example.com", "/apix", "exact-api"},
		{"api.example.com", "/ap", "exact-root"},
		{"api.example.com", "/api/v1?x=/", "exact-v1"},
	}
	authz := &authzServer{answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
		return deniedResponse(http.StatusForbidden, ""), nil
	}}
	gw := startGateway(t, authz, cfg)
	for _, tt := range tests {
		t.Run(tt.host+tt.path, func(t *testing.T) {
			before := len(authz.requests())
			resp := serve(t, gw, "GET", "http://"+tt.host+tt.path, nil)
			reqs := authz.requests()
			if len(reqs) != before+1 {
				t.Fatalf("ext_authz called %d times, want once (status %d)", len(reqs)-before, resp.StatusCode)
			}
			if got := reqs[len(reqs)-1].GetAttributes().GetContextExtensions()["route"]; got != tt.want {
				t.Errorf("route = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("no domain matches", func(t *testing.T) {
		gw := startGateway(t, authz, gwConfig{
			Clusters: cfg.Clusters,
			Routes:   &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("only", []string{"only.example"}, route("only", "/api"))}},
		})
		before := len(authz.requests())
		for _, target := range []string{"http://other.example/api", "http://only.example/other"} {
			if resp := serve(t, gw, "GET", target, nil); resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404", target, resp.StatusCode)
			}
		}
		if n := len(authz.requests()) - before; n != 0 {
			t.Errorf("ext_authz called %d times for unrouted requests", n)
		}
	})
}

func TestCheckRequestShape(t *testing.T) {
	cfg := gwConfig{
		Clusters: []*clusterv3.Cluster{cluster(t, "c", "127.0.0.1:1")},
		Routes: &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{
			vhost("v", []string{"*"}, authzRoute(t, "/", "c", map[string]string{"config_id": "ns.auth"})),
		}},
	}
	deny := func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
		return deniedResponse(http.StatusForbidden, ""), nil
	}
	// What Go's client adds to every request it sends.
	client := map[string][]string{"user-agent": {"Go-http-client/1.1"}, "accept-encoding": {"gzip"}, "content-length": {"0"}}
	tests := []struct {
		name      string
		target    string
		header    http.Header
		wantReqID string // "" for a generated one
		scheme    string
		raw       bool // encode_raw_headers
	}{
		{
			name:   "request id generated",
			target: "http://App.Example:8080/p/a%20b?q=1&r=two",
			header: http.Header{"X-Custom": {"A"}, "X-Multi": {"a", "b"}, "Authorization": {"Bearer t"}},
			scheme: "http",
		},
		{
			name:      "request id kept, over TLS",
			target:    "https://app.example/",
			header:    http.Header{"X-Request-Id": {"given-id"}},
			wantReqID: "given-id",
			scheme:    "https",
		},
		{
			name:   "encode_raw_headers: header_map, repeated headers apart",
			target: "http://app.example/raw?x=1",
			header: http.Header{"X-Multi": {"a", "b"}, "X-Latin": {"caf\xe9"}},
			scheme: "http",
			raw:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz := &authzServer{answer: deny}
			c := cfg
			c.RawHeaders = tt.raw
			source := sendOnce(t, authz, c, tt.scheme == "https", "POST", tt.target, tt.header)
			reqs := authz.requests()
			if len(reqs) != 1 {
				t.Fatalf("ext_authz called %d times, want 1", len(reqs))
			}
			h := reqs[0].GetAttributes().GetRequest().GetHttp()
			id := h.GetId()
			if tt.wantReqID != "" && id != tt.wantReqID {
				t.Errorf("id = %q, want %q", id, tt.wantReqID)
			}
			if tt.wantReqID == "" && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
				t.Errorf("generated id = %q, want 32 hex digits", id)
			}
			u, _ := neturl.Parse(tt.target)
			wantLines := map[string][]string{
				":authority":   {u.Host},
				":method":      {"POST"},
				":path":        {u.RequestURI()},
				":scheme":      {tt.scheme},
				"x-request-id": {id},
			}
			for k, vs := range client {
				wantLines[k] = vs
			}
			for k, vs := range tt.header {
				wantLines[strings.ToLower(k)] = vs
			}
			if tt.raw {
				// Envoy's encode_raw_headers: key and raw_value, one entry per line.
				got := map[string][]string{}
				for _, hv := range h.GetHeaderMap().GetHeaders() {
					if hv.GetValue() != "" {
						t.Errorf("header_map %s has value %q; only raw_value is set", hv.GetKey(), hv.GetValue())
					}
					got[hv.GetKey()] = append(got[hv.GetKey()], string(hv.GetRawValue()))
				}
				if diff := cmp.Diff(wantLines, got); diff != "" {
					t.Errorf("header_map (-want +got):\n%s", diff)
				}
				if len(h.GetHeaders()) != 0 {
					t.Errorf("headers = %v, want none beside header_map", h.GetHeaders())
				}
			} else {
				wantHeaders := map[string]string{}
				for k, vs := range wantLines {
					wantHeaders[k] = strings.Join(vs, ",")
				}
				if diff := cmp.Diff(wantHeaders, h.GetHeaders()); diff != "" {
					t.Errorf("headers (-want +got):\n%s", diff)
				}
			}
			want := map[string]string{
				"method": "POST", "path": u.RequestURI(), "host": u.Host, "scheme": tt.scheme, "protocol": "HTTP/1.1",
				"source": source, "config_id": "ns.auth",
			}
			sa := reqs[0].GetAttributes().GetSource().GetAddress().GetSocketAddress()
			got := map[string]string{
				"method": h.GetMethod(), "path": h.GetPath(), "host": h.GetHost(), "scheme": h.GetScheme(), "protocol": h.GetProtocol(),
				"source":    net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue()))),
				"config_id": reqs[0].GetAttributes().GetContextExtensions()["config_id"],
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
		})
	}
}

// sendOnce serves cfg on the HTTP listener, or on the HTTPS one with a certificate for
// target's host, sends one request and returns the client's address as the gateway saw
// it (the local address of the client's connection).
func sendOnce(t *testing.T, authz *authzServer, cfg gwConfig, https bool, method, target string, header http.Header) string {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	port, scheme := devgateway.HTTPPort, "http"
	res := gatewayResources(t, authz, cfg, https)
	tr := &http.Transport{}
	if https {
		port, scheme = devgateway.HTTPSPort, "https"
		cert, chain, key := selfSigned(t, u.Hostname())
		res = append(res, tlsSecret("cert", chain, key))
		pool := x509.NewCertPool()
		pool.AddCert(cert)
		tr.TLSClientConfig = &tls.Config{ServerName: u.Hostname(), RootCAs: pool}
	}
	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, port, lis) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })
	feed(t, p, res...)

	var local string
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(method, scheme+"://"+lis.Addr().String()+u.RequestURI(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = u.Host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return local
}

// echoUpstream starts the echo service and returns its address.
func echoUpstream(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	h := devgateway.Echo()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func do(t *testing.T, method, url, host string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func echoed(t *testing.T, body []byte) devgateway.Echoed {
	t.Helper()
	var e devgateway.Echoed
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("upstream answer %q: %v", body, err)
	}
	return e
}

func TestProxying(t *testing.T) {
	upstream := echoUpstream(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Upstream", "echo")
			w.Header().Set("Cache-Control", "public")
			h.ServeHTTP(w, r)
		})
	})
	cfg := gwConfig{
		Clusters: []*clusterv3.Cluster{cluster(t, "echo", upstream), cluster(t, "down", "127.0.0.1:1")},
		Routes: &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"},
			openRoute(t, "/public", "echo"),
			openRoute(t, "/down", "down"),
			authzRoute(t, "/strip", "echo", map[string]string{"config_id": "ns.a"}, "X-Internal", "authorization"),
			authzRoute(t, "/", "echo", map[string]string{"config_id": "ns.a"}),
		)}},
	}
	allow := okResponse(
		hvo("x-user", "alice", overwrite),
		hvo("x-trace", "authz", appendTo),
		hvo("x-default", "authz", ifAbsent),
		hvo("x-absent", "authz", ifAbsent),
		hvo("x-internal", "from-authz", overwrite),
	)
	allow.GetOkResponse().HeadersToRemove = []string{"cookie"}
	allow.GetOkResponse().ResponseHeadersToAdd = []*corev3.HeaderValueOption{
		hvo("cache-control", "no-store", overwrite),
		hvo("x-served-by", "gatehouse", overwrite),
	}
	authz := &authzServer{answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) { return allow, nil }}
	url := startGateway(t, authz, cfg)
	sent := http.Header{
		"X-User": {"mallory"}, "X-Trace": {"client"}, "X-Default": {"client"}, "Cookie": {"session=1"},
		"X-Internal": {"yes"}, "Authorization": {"Bearer t"}, "X-Request-Id": {"rid-1"},
	}

	t.Run("disabled route never calls ext_authz", func(t *testing.T) {
		before := len(authz.requests())
		resp, body := do(t, "GET", url+"/public/page?x=1", "app.example", sent)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if n := len(authz.requests()) - before; n != 0 {
			t.Errorf("ext_authz called %d times on a route with ext_authz disabled", n)
		}
		e := echoed(t, body)
		if e.Path != "/public/page?x=1" || e.Host != "app.example" || e.Headers["x-user"] != "mallory" || e.Headers["cookie"] != "session=1" {
			t.Errorf("upstream saw %+v", e)
		}
	})

	t.Run("allowed: headers applied, host kept", func(t *testing.T) {
		resp, body := do(t, "GET", url+"/app", "app.example:8080", sent)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		e := echoed(t, body)
		if e.Host != "app.example:8080" {
			t.Errorf("upstream Host = %q, want app.example:8080", e.Host)
		}
		want := map[string]string{
			"x-user":        "alice",
			"x-trace":       "client,authz",
			"x-default":     "client",
			"x-absent":      "authz",
			"x-internal":    "from-authz",
			"authorization": "Bearer t",
			"x-request-id":  "rid-1",
		}
		for k, v := range want {
			if got := e.Headers[k]; got != v {
				t.Errorf("upstream header %s = %q, want %q", k, got, v)
			}
		}
		if _, ok := e.Headers["cookie"]; ok {
			t.Errorf("cookie reached the upstream after ext_authz removed it")
		}
		if got := resp.Header.Values("Cache-Control"); !cmp.Equal(got, []string{"no-store"}) {
			// Regression: the upstream's value was added beside ext_authz's overwrite.
			t.Errorf("Cache-Control = %q, want [no-store] (ext_authz overwrites the upstream's)", got)
		}
		if got := resp.Header.Get("X-Served-By"); got != "gatehouse" {
			t.Errorf("X-Served-By = %q", got)
		}
		if got := resp.Header.Get("X-Upstream"); got != "echo" {
			t.Errorf("X-Upstream = %q, the upstream's own headers must pass", got)
		}
	})

	t.Run("route header removal after ext_authz", func(t *testing.T) {
		before := len(authz.requests())
		resp, body := do(t, "GET", url+"/strip", "app.example", sent)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		reqs := authz.requests()[before:]
		if len(reqs) != 1 {
			t.Fatalf("ext_authz called %d times", len(reqs))
		}
		seen := reqs[0].GetAttributes().GetRequest().GetHttp().GetHeaders()
		if seen["x-internal"] != "yes" || seen["authorization"] != "Bearer t" {
			t.Errorf("ext_authz did not see the headers the route removes: %v", seen)
		}
		e := echoed(t, body)
		for _, h := range []string{"x-internal", "authorization"} {
			if v, ok := e.Headers[h]; ok {
				t.Errorf("upstream got %s: %q; the route removes it", h, v)
			}
		}
		if e.Headers["x-user"] != "alice" {
			t.Errorf("x-user = %q, want ext_authz's alice", e.Headers["x-user"])
		}
	})

	t.Run("upstream down", func(t *testing.T) {
		resp, body := do(t, "GET", url+"/down", "app.example", nil)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "upstream connect error") {
			t.Errorf("status %d body %q, want 503 upstream connect error", resp.StatusCode, body)
		}
	})
}

func TestDenied(t *testing.T) {
	upstreamCalls := 0
	var mu sync.Mutex
	upstream := echoUpstream(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			upstreamCalls++
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	cfg := gwConfig{
		CheckTimeout: 50 * time.Millisecond,
		Clusters:     []*clusterv3.Cluster{cluster(t, "echo", upstream)},
		Routes: &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"},
			authzRoute(t, "/", "echo", map[string]string{"config_id": "ns.a"}),
		)}},
	}
	tests := []struct {
		name        string
		answer      func(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error)
		wantStatus  int
		wantBody    string
		wantHeaders http.Header
	}{
		{
			name: "forbidden, empty body",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				return deniedResponse(http.StatusForbidden, ""), nil
			},
			wantStatus:  http.StatusForbidden,
			wantHeaders: http.Header{"Content-Length": {"0"}},
		},
		{
			name: "unauthenticated with headers and body",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				r := deniedResponse(http.StatusUnauthorized, "log in first", hvo("www-authenticate", "Bearer", overwrite))
				r.Status.Code = int32(code.Code_UNAUTHENTICATED)
				return r, nil
			},
			wantStatus:  http.StatusUnauthorized,
			wantBody:    "log in first",
			wantHeaders: http.Header{"Content-Length": {"12"}, "Www-Authenticate": {"Bearer"}},
		},
		{
			name: "redirect with two cookies",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				return deniedResponse(http.StatusFound, "",
					hvo("location", "https://idp.example/auth", overwrite),
					hvo("set-cookie", "state=1; Path=/", appendTo),
					hvo("set-cookie", "nonce=2; Path=/", appendTo),
				), nil
			},
			wantStatus: http.StatusFound,
			wantHeaders: http.Header{
				"Content-Length": {"0"},
				"Location":       {"https://idp.example/auth"},
				"Set-Cookie":     {"state=1; Path=/", "nonce=2; Path=/"},
			},
		},
		{
			name: "denied without a denied response",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				return &authv3.CheckResponse{Status: &rpcstatus.Status{Code: int32(code.Code_PERMISSION_DENIED)}}, nil
			},
			wantStatus:  http.StatusForbidden,
			wantHeaders: http.Header{"Content-Length": {"0"}},
		},
		{
			name: "ext_authz error",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				return nil, errors.New("connection refused")
			},
			wantStatus:  http.StatusForbidden,
			wantHeaders: http.Header{"Content-Length": {"0"}},
		},
		{
			name: "ext_authz slower than the check timeout",
			answer: func(ctx context.Context, _ *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
			wantStatus:  http.StatusForbidden,
			wantHeaders: http.Header{"Content-Length": {"0"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz := &authzServer{answer: tt.answer}
			url := startGateway(t, authz, cfg)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, _ := http.NewRequest("GET", url+"/secret", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || string(body) != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			for k, want := range tt.wantHeaders {
				if got := resp.Header.Values(k); !cmp.Equal(got, want) {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if upstreamCalls != 0 {
				t.Errorf("the upstream was called %d times for a denied request", upstreamCalls)
			}
		})
	}
}

func TestRoundRobin(t *testing.T) {
	var addrs []string
	for i := range 2 {
		name := strconv.Itoa(i)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(srv.Close)
		addrs = append(addrs, srv.Listener.Addr().String())
	}
	url := startGateway(t, nil, gwConfig{
		Clusters: []*clusterv3.Cluster{cluster(t, "two", addrs...)},
		Routes:   &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"}, openRoute(t, "/", "two"))}},
	})
	var got []string
	for range 4 {
		_, body := do(t, "GET", url+"/", "x", nil)
		got = append(got, string(body))
	}
	if diff := cmp.Diff([]string{"0", "1", "0", "1"}, got); diff != "" {
		t.Errorf("upstreams answering (-want +got):\n%s", diff)
	}
}

// TestUpdate: nothing is served before a config; a route configuration with a route the
// gateway cannot honour is refused, naming it, and the previous one keeps serving; a new
// route configuration replaces the old one whole.
func TestUpdate(t *testing.T) {
	upstream := echoUpstream(t, nil)
	authz := &authzServer{}
	p, url := newProxy(t)

	if resp, _ := do(t, "GET", url+"/", "x", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status before any config = %d, want 503", resp.StatusCode)
	}
	first := gwConfig{
		Clusters: []*clusterv3.Cluster{cluster(t, "echo", upstream), cluster(t, "down", closedAddr(t))},
		Routes:   &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"}, openRoute(t, "/", "echo"))}},
	}
	feed(t, p, gatewayResources(t, authz, first, false)...)
	resp, body := do(t, "GET", url+"/gone", "x", nil)
	if resp.StatusCode != http.StatusOK || echoed(t, body).Path != "/gone" {
		t.Errorf("first config: %d %s", resp.StatusCode, body)
	}

	bad := openRoute(t, "/gone", "down")
	bad.Match = &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "/gone.*"}}}
	refused := &routev3.RouteConfiguration{Name: "http", VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"}, bad, openRoute(t, "/", "echo"))}}
	err := p.Handle(resourcev3.RouteType, set(t, refused))
	if err == nil || !strings.Contains(err.Error(), "route config http") || !strings.Contains(err.Error(), "virtual_hosts[0].routes[0].match") {
		t.Errorf("Handle(a regex route) = %v, want the route config and the match named", err)
	}
	if resp, body := do(t, "GET", url+"/gone", "x", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after a refused update the previous config must serve: %d %s", resp.StatusCode, body)
	}

	next := &routev3.RouteConfiguration{Name: "http", VirtualHosts: []*routev3.VirtualHost{vhost("v", []string{"*"},
		openRoute(t, "/gone", "down"), openRoute(t, "/", "echo"))}}
	if err := p.Handle(resourcev3.RouteType, set(t, next)); err != nil {
		t.Fatal(err)
	}
	if resp, body := do(t, "GET", url+"/gone", "x", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after the update /gone goes to the down cluster: %d %s", resp.StatusCode, body)
	}
	if n := len(authz.requests()); n != 0 {
		t.Errorf("ext_authz called %d times on open routes", n)
	}
}

func TestEcho(t *testing.T) {
	srv := httptest.NewServer(devgateway.Echo())
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("PUT", srv.URL+"/a/b?c=d", strings.NewReader("payload"))
	req.Host = "echo.example"
	req.Header["X-Multi"] = []string{"1", "2"}
	req.Header.Set("X-Single", "v")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	body, _ := io.ReadAll(resp.Body)
	got := echoed(t, body)
	want := devgateway.Echoed{
		Method: "PUT", Path: "/a/b?c=d", Host: "echo.example", Body: "payload",
		Headers: map[string]string{
			"x-multi": "1,2", "x-single": "v", "content-length": "7",
			"accept-encoding": "gzip", "user-agent": "Go-http-client/1.1",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
}

// Regression: a cluster refused once made every later CDS response a NACK, because the
// gateway judged its whole set each time, while Envoy judges only what a response
// carries; the control plane then never saw a new cluster acknowledged and held its
// routes back. A resource refused before and handed on unchanged (the same
// *anypb.Any, as the xDS client does) is refused without a word; a new version of it
// is judged again.
func TestARefusedResourceIsNamedOnlyWhenItArrives(t *testing.T) {
	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: zerolog.Nop()})
	bad := cluster(t, "bad", "127.0.0.1:1")
	bad.CircuitBreakers = &clusterv3.CircuitBreakers{} // a field the gateway does not take
	first := set(t, cluster(t, "a", "127.0.0.1:1"), bad)
	if err := p.Handle(resourcev3.ClusterType, first); err == nil || !strings.Contains(err.Error(), "cluster bad") {
		t.Fatalf("first response: %v, want cluster bad refused", err)
	}
	next := set(t, cluster(t, "b", "127.0.0.1:2"))
	next["a"], next["bad"] = first["a"], first["bad"]
	if err := p.Handle(resourcev3.ClusterType, next); err != nil {
		t.Errorf("a response bringing only cluster b: %v, want it acknowledged", err)
	}
	again := maps.Clone(next)
	again["bad"] = mustAny(t, bad) // a new version, as refused as the last
	if err := p.Handle(resourcev3.ClusterType, again); err == nil || !strings.Contains(err.Error(), "cluster bad") {
		t.Errorf("a new version of cluster bad: %v, want it refused", err)
	}
}
