package devgateway_test

import (
	"net/http"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/devgateway"
)

// TestProxyPerRouteAndHostPort: ext_authz per-route settings go from virtual host to
// route as in Envoy (context extensions merged, the most specific says disabled), and
// the Host header's port takes part in domain matching unless the HTTP connection
// manager strips it.
func TestProxyPerRouteAndHostPort(t *testing.T) {
	authz := &authzServer{}
	authzAddr := startAuthz(t, authz)
	echo := tagged(t, "echo")
	vh := vhost("app", []string{"app.example"},
		openRoute(t, "/open", "ns.echo"),
		authzRoute(t, "/ext", "ns.echo", map[string]string{"route": "ext"}),
		&routev3.Route{Name: "inherit", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "ns.echo"}}}},
	)
	vh.TypedPerFilterConfig = perRoute(t, &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
		CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: map[string]string{"config_id": "ns.app", "route": "vhost"}},
	}})
	routes := &routev3.RouteConfiguration{Name: "http", VirtualHosts: []*routev3.VirtualHost{vh}}
	listener := func(strip bool) *hcmv3.HttpConnectionManager {
		h := hcm(t, "http", extAuthzFilter(t, "ns.extauth", time.Second), routerFilter(t))
		if strip {
			h.StripPortMode = &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true}
		}
		return h
	}
	tests := []struct {
		name      string
		strip     bool
		host      string
		path      string
		want      int
		wantCheck map[string]string // nil: no Check
	}{
		{"route disables", true, "app.example", "/open", http.StatusOK, nil},
		{"route extensions merged over the virtual host's", true, "app.example", "/ext", http.StatusOK, map[string]string{"config_id": "ns.app", "route": "ext"}},
		{"virtual host's settings inherited", true, "app.example", "/other", http.StatusOK, map[string]string{"config_id": "ns.app", "route": "vhost"}},
		{"port stripped", true, "app.example:8080", "/open", http.StatusOK, nil},
		{"port kept by default", false, "app.example:8080", "/open", http.StatusNotFound, nil},
		{"no port, default", false, "app.example", "/open", http.StatusOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := newProxy(t)
			feed(t, p, http2Cluster(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", authzAddr), cla(t, "ns.echo", echo),
				listenerWith(t, "http", devgateway.HTTPPort, listener(tt.strip)), routes)
			before := len(authz.requests())
			resp, body := do(t, "GET", url+tt.path, tt.host, nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tt.want)
			}
			reqs := authz.requests()[before:]
			switch {
			case tt.wantCheck == nil && len(reqs) != 0:
				t.Errorf("%d Checks on a route with ext_authz disabled", len(reqs))
			case tt.wantCheck != nil && len(reqs) != 1:
				t.Errorf("%d Checks, want 1", len(reqs))
			case tt.wantCheck != nil:
				if diff := cmp.Diff(tt.wantCheck, reqs[0].GetAttributes().GetContextExtensions()); diff != "" {
					t.Errorf("context extensions (-want +got):\n%s", diff)
				}
			}
		})
	}
}
