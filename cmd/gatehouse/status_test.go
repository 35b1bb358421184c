package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Regression: a reason of several lines (one per bad document) broke the status
// table; the config source and stuck steps were not shown at all.
func TestStatusTable(t *testing.T) {
	statuses := []server.Status{
		{ID: "source:/cfg", State: server.StateRejected, ServingPrevious: true,
			Reason: "not applied, so no AuthConfig changes: /cfg/a.yaml:3: document 1: yaml: bad\n/cfg/b.yaml:9: Secret default.s: bogus: unknown field"},
		{ID: "ns.a", State: server.StateAccepted, Stuck: []chain.StuckStep{{Step: "step/slow", Plugin: "slow.so", Calls: 3}}},
		{ID: "ns.b", State: server.StateRejected, Reason: "no plugin"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(statuses)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code, err := runWith([]string{"extauth", "status", "--admin", strings.TrimPrefix(srv.URL, "http://")}, &stdout, &stderr)
	if code != 1 || err == nil || err.Error() != "the config source cannot be applied, and 1 of 2 auth configs rejected" {
		t.Errorf("status = %d, %v; want 1 and the source and one rejected config", code, err)
	}
	want := []string{
		"AUTHCONFIG   STATE     SERVING           REASON",
		"source:/cfg  Rejected  previous version  not applied, so no AuthConfig changes: /cfg/a.yaml:3: document 1: yaml: bad; /cfg/b.yaml:9: Secret default.s: bogus: unknown field",
		"ns.a         Accepted  yes               step/slow stuck: 3 calls still run past their deadline (plugin slow.so)",
		"ns.b         Rejected  no                no plugin",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
