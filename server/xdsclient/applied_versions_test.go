package xdsclient_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// TestARejectedConfigKeepsTheVersionThatServes: the metric names the version of each
// config that serves; a config rejected at its new version keeps the old one, and one
// rejected before it ever served has none.
func TestARejectedConfigKeepsTheVersionThatServes(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := xdsclient.NewAppliedVersions(reg)
	a.Statuses(nil)
	a.Applied("", map[string]string{"ns.a": "v1", "ns.b": "v1"}, nil)
	a.Statuses([]server.Status{{ID: "ns.a", State: server.StateRejected}, {ID: "ns.c", State: server.StateRejected}})
	a.Applied("", map[string]string{"ns.a": "v2", "ns.b": "v2", "ns.c": "v1"}, nil)
	want := `
# HELP gatehouse_extauth_xds_config_version 1 for the version of each ExtAuthConfig that serves, as the control plane versioned it.
# TYPE gatehouse_extauth_xds_config_version gauge
gatehouse_extauth_xds_config_version{config_id="ns.a",version="v1"} 1
gatehouse_extauth_xds_config_version{config_id="ns.b",version="v2"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gatehouse_extauth_xds_config_version"); err != nil {
		t.Error(err)
	}
}
