package controlplane_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// A route to a new Upstream reaches the gateway once the gateway has the Upstream's
// cluster and endpoints: the control plane sees the gateway acknowledge them and does
// not wait for the bound. (Were the acknowledgements not seen, the route would be
// published at the bound, and the gateway named in a Warning on the Upstream.)
func TestANewUpstreamsRouteWaitsForTheGatewaysAcknowledgement(t *testing.T) {
	s := startSystem(t, "alpha")
	fresh := httptest.NewServer(devgateway.Echo())
	t.Cleanup(fresh.Close)
	testbin.WriteFile(t, filepath.Join(s.dir, "fresh_upstream.yaml"), testbin.Upstream("fresh", fresh.Listener.Addr().String()))
	vs := virtualService("default", `["*"]`, "/extra-never-matched")
	vs = strings.Replace(vs, "      - matchers: [{prefix: /}]", `      - matchers: [{prefix: /fresh}]
        routeAction: {single: {upstream: {name: fresh, namespace: gatehouse-system}}}
      - matchers: [{prefix: /}]`, 1)
	testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), vs)
	s.expect(t, "/fresh", nil, http.StatusOK)
	s.expectDataPlane(t, "VirtualService", "default", "proxies 1/1")

	all, err := s.statuses()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		for _, st := range r.Statuses {
			if st.State == "Warning" {
				t.Errorf("%s %s has a Warning from %s: %v", r.Kind, r.Name, st.ReportedBy, st.Reasons)
			}
		}
	}
	if out := s.cp.Output(); strings.Contains(out, "within the bound") {
		t.Errorf("the control plane waited for the bound:\n%s", out)
	}
}
