package server_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Regression: a config source that could not be applied showed only in the log; the
// status said Accepted for everything.
func TestSourceProblemInStatusAndMetrics(t *testing.T) {
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
	promReg := prometheus.NewPedanticRegistry()
	m := server.NewMetrics(promReg)
	problem := errors.New("/cfg/a.yaml:3: document 1: yaml: found a tab character that violates indentation")
	reg.SetSource("/cfg", problem)
	m.SetSource("/cfg", problem)
	want := []server.Status{
		{ID: "source:/cfg", State: server.StateRejected, ServingPrevious: true,
			Reason: "not applied, so no AuthConfig changes: /cfg/a.yaml:3: document 1: yaml: found a tab character that violates indentation"},
		{ID: "ns.a", State: server.StateAccepted},
	}
	if diff := cmp.Diff(want, reg.Statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if !server.IsSource(reg.Statuses()[0]) || server.IsSource(reg.Statuses()[1]) {
		t.Errorf("IsSource does not tell the source from an AuthConfig")
	}
	const help = "# HELP gatehouse_extauth_config_source_problem 1 while the config source (--config) cannot be applied (a document that does not parse, the folder gone), so no AuthConfig changes; 0 when it applies.\n# TYPE gatehouse_extauth_config_source_problem gauge\n"
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(help+`gatehouse_extauth_config_source_problem{path="/cfg"} 1`+"\n"), "gatehouse_extauth_config_source_problem"); err != nil {
		t.Error(err)
	}

	reg.SetSource("/cfg", nil)
	m.SetSource("/cfg", nil)
	if diff := cmp.Diff([]server.Status{{ID: "ns.a", State: server.StateAccepted}}, reg.Statuses()); diff != "" {
		t.Errorf("statuses once mended (-want +got):\n%s", diff)
	}
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(help+`gatehouse_extauth_config_source_problem{path="/cfg"} 0`+"\n"), "gatehouse_extauth_config_source_problem"); err != nil {
		t.Error(err)
	}
}
