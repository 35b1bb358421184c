package devgateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/devgateway"
)

// appRoutes is the "http" route configuration: /open without ext_authz, everything
// else checked with config_id ns.app and x-internal removed before the upstream.
func appRoutes(t *testing.T) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: "http", VirtualHosts: []*routev3.VirtualHost{vhost("app", []string{"*"},
		openRoute(t, "/open", "ns.echo"),
		authzRoute(t, "/", "ns.echo", map[string]string{"config_id": "ns.app"}, "X-Internal"),
	)}}
}

// tagged is an echo upstream that names itself in the X-Upstream response header.
func tagged(t *testing.T, name string) string {
	return echoUpstream(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Upstream", name)
			w.Header().Set("X-Proto", r.Proto)
			h.ServeHTTP(w, r)
		})
	})
}

func TestProxyServesOnlyWhenComplete(t *testing.T) {
	p, url := newProxy(t)
	authzAddr := startAuthz(t, &authzServer{})
	echo := tagged(t, "echo")
	steps := []struct {
		name string
		res  []types.Resource
		want int
	}{
		{"nothing yet", nil, http.StatusServiceUnavailable},
		{"clusters without endpoints", []types.Resource{http2Cluster(t, "ns.extauth"), edsCluster("ns.echo")}, http.StatusServiceUnavailable},
		{"listener without its route config", []types.Resource{httpListener(t, "ns.extauth", time.Second)}, http.StatusServiceUnavailable},
		{"route config, endpoints missing", []types.Resource{appRoutes(t)}, http.StatusServiceUnavailable},
		{"the extauth endpoints, the echo ones missing", []types.Resource{cla(t, "ns.extauth", authzAddr)}, http.StatusServiceUnavailable},
		{"complete", []types.Resource{cla(t, "ns.extauth", authzAddr), cla(t, "ns.echo", echo)}, http.StatusOK},
		{"the listener removed", []types.Resource{}, http.StatusServiceUnavailable},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.res != nil {
				typ := resourcev3.ListenerType
				if len(s.res) > 0 {
					typ = typeOf(s.res[0])
				}
				if err := p.Handle(typ, set(t, s.res...)); err != nil {
					t.Fatalf("Handle: %v", err)
				}
			}
			for _, path := range []string{"/open", "/secured"} {
				if resp, body := do(t, "GET", url+path, "app.example", nil); resp.StatusCode != s.want {
					t.Errorf("GET %s: %d %q, want %d", path, resp.StatusCode, body, s.want)
				}
			}
			if got := p.Ready(devgateway.HTTPPort); got != (s.want == http.StatusOK) {
				t.Errorf("Ready = %v", got)
			}
		})
	}
}

func TestProxyExtAuthz(t *testing.T) {
	p, url := newProxy(t)
	authz := &authzServer{}
	authzAddr := startAuthz(t, authz)
	feed(t, p, http2Cluster(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", authzAddr),
		cla(t, "ns.echo", tagged(t, "echo")), httpListener(t, "ns.extauth", 100*time.Millisecond), appRoutes(t))
	allow := func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
		return okResponse(hvo("x-user", "alice", overwrite)), nil
	}
	tests := []struct {
		name       string
		path       string
		answer     func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error)
		wantStatus int
		wantBody   string
		wantHeader map[string]string // response headers
		wantChecks int
		upstream   map[string]string // headers the upstream saw ("" for absent)
	}{
		{
			name: "open route is not checked", path: "/open/x", answer: allow, wantStatus: http.StatusOK, wantChecks: 0,
			upstream: map[string]string{"x-internal": "yes", "x-user": "mallory"},
		},
		{
			name: "allowed: ext_authz headers applied, route headers removed", path: "/app", answer: allow,
			wantStatus: http.StatusOK, wantChecks: 1, upstream: map[string]string{"x-internal": "", "x-user": "alice"},
		},
		{
			name: "denied: status, body and headers reach the client", path: "/app",
			answer: func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				r := deniedResponse(http.StatusUnauthorized, "log in first", hvo("www-authenticate", "Bearer", overwrite))
				r.Status.Code = int32(code.Code_UNAUTHENTICATED)
				return r, nil
			},
			wantStatus: http.StatusUnauthorized, wantBody: "log in first", wantHeader: map[string]string{"Www-Authenticate": "Bearer"}, wantChecks: 1,
		},
		{
			name: "Check past the filter's timeout denies with 403", path: "/app",
			answer: func(ctx context.Context, _ *authv3.CheckRequest) (*authv3.CheckResponse, error) {
				<-ctx.Done() // until the gateway's deadline
				return nil, ctx.Err()
			},
			wantStatus: http.StatusForbidden, wantChecks: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz.setAnswer(tt.answer)
			before := len(authz.requests())
			resp, body := do(t, "GET", url+tt.path, "app.example", http.Header{"X-Internal": {"yes"}, "X-User": {"mallory"}})
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tt.wantStatus)
			}
			reqs := authz.requests()[before:]
			if len(reqs) != tt.wantChecks {
				t.Fatalf("%d Checks, want %d", len(reqs), tt.wantChecks)
			}
			for _, r := range reqs {
				if got := r.GetAttributes().GetContextExtensions()["config_id"]; got != "ns.app" {
					t.Errorf("config_id = %q, want ns.app", got)
				}
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body %q, want %q", body, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("response header %s = %q, want %q", k, got, v)
				}
			}
			if tt.upstream != nil {
				e := echoed(t, body)
				for k, v := range tt.upstream {
					if got := e.Headers[k]; got != v {
						t.Errorf("upstream header %s = %q, want %q", k, got, v)
					}
				}
			}
		})
	}
}

// TestProxyExtAuthzFailures: when ext_authz cannot be asked, a secured route is denied
// with 403 (failure_mode_allow false); the open route keeps working.
func TestProxyExtAuthzFailures(t *testing.T) {
	authzAddr := startAuthz(t, &authzServer{})
	echo := tagged(t, "echo")
	tests := []struct {
		name  string
		authz []types.Resource // the extauth cluster and its endpoints
	}{
		{"unreachable", []types.Resource{http2Cluster(t, "ns.extauth"), cla(t, "ns.extauth", closedAddr(t))}},
		{"no endpoints", []types.Resource{http2Cluster(t, "ns.extauth"), cla(t, "ns.extauth")}},
		// Envoy would speak HTTP/1.1 to it and every Check would fail.
		{"cluster without HTTP/2", []types.Resource{edsCluster("ns.extauth"), cla(t, "ns.extauth", authzAddr)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := newProxy(t)
			res := append([]types.Resource{edsCluster("ns.echo"), cla(t, "ns.echo", echo), httpListener(t, "ns.extauth", time.Second), appRoutes(t)}, tt.authz...)
			feed(t, p, res...)
			if resp, body := do(t, "GET", url+"/app", "app.example", nil); resp.StatusCode != http.StatusForbidden {
				t.Errorf("secured route: %d %q, want 403", resp.StatusCode, body)
			}
			if resp, body := do(t, "GET", url+"/open", "app.example", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("open route: %d %q, want 200", resp.StatusCode, body)
			}
		})
	}
}

func TestProxyEDSUpdates(t *testing.T) {
	p, url := newProxy(t)
	authzAddr := startAuthz(t, &authzServer{})
	a, b := tagged(t, "a"), tagged(t, "b")
	feed(t, p, http2Cluster(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", authzAddr),
		cla(t, "ns.echo", a), httpListener(t, "ns.extauth", time.Second), appRoutes(t))
	steps := []struct {
		name     string
		endpoint []string
		want     int
		tags     string // the upstreams that answered, in order, for eight requests
	}{
		{"first endpoint", []string{a}, http.StatusOK, "a,a,a,a,a,a,a,a"},
		{"moved", []string{b}, http.StatusOK, "b,b,b,b,b,b,b,b"},
		{"two, round robin", []string{a, b}, http.StatusOK, "ab"},
		{"none", nil, http.StatusServiceUnavailable, ""},
		{"back", []string{a}, http.StatusOK, "a,a,a,a,a,a,a,a"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := p.Handle(resourcev3.EndpointType, set(t, cla(t, "ns.extauth", authzAddr), cla(t, "ns.echo", s.endpoint...))); err != nil {
				t.Fatal(err)
			}
			var tags []string
			for range 4 {
				for _, path := range []string{"/open", "/app"} {
					resp, body := do(t, "GET", url+path, "app.example", nil)
					if resp.StatusCode != s.want {
						t.Fatalf("GET %s: %d %q, want %d", path, resp.StatusCode, body, s.want)
					}
					tags = append(tags, resp.Header.Get("X-Upstream"))
				}
			}
			got := strings.Join(tags, ",")
			if s.tags == "ab" {
				if !strings.Contains(got, "a") || !strings.Contains(got, "b") {
					t.Errorf("upstreams %q, want both a and b", got)
				}
			} else if s.want == http.StatusOK && got != s.tags {
				t.Errorf("upstreams %q, want %q", got, s.tags)
			}
		})
	}
}

// TestProxyHTTP2Upstream: a cluster with explicit HTTP/2 is spoken to over HTTP/2 with
// prior knowledge, as Envoy would.
func TestProxyHTTP2Upstream(t *testing.T) {
	p, url := newProxy(t)
	h2 := h2cUpstream(t)
	feed(t, p, http2Cluster(t, "ns.echo"), cla(t, "ns.echo", h2),
		listenerWith(t, "http", devgateway.HTTPPort, hcm(t, "http", routerFilter(t))), appRoutes(t))
	resp, body := do(t, "GET", url+"/open", "app.example", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Proto") != "HTTP/2.0" {
		t.Errorf("status %d, upstream protocol %q (%s), want 200 over HTTP/2.0", resp.StatusCode, resp.Header.Get("X-Proto"), body)
	}
}

func h2cUpstream(t *testing.T) string {
	t.Helper()
	srv := newUnstartedEcho(t)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}
