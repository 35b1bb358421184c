package devgateway_test

import (
	"net/http"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// TestPrefixMatchesThePathAsSent: like Envoy, routes match the path as the client sent
// it, so a percent-encoded slash does not reach a prefix the path does not literally
// start with.
func TestPrefixMatchesThePathAsSent(t *testing.T) {
	gw := startGateway(t, nil, gwConfig{
		Routes:   &routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vhost("vh", []string{"*"}, openRoute(t, "/open/", "echo"))}},
		Clusters: []*clusterv3.Cluster{cluster(t, "echo", echoUpstream(t, nil))},
	})
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/open/x", http.StatusOK},
		{"/open%2Fx", http.StatusNotFound},
	} {
		if got := serve(t, gw, http.MethodGet, "http://gw"+tc.path, nil).StatusCode; got != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, got, tc.want)
		}
	}
}
