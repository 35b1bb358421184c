package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// fileStep is a step loaded from a plugin file, as server.PluginStep is.
type fileStep struct {
	funcStep
	file string
}

func (s fileStep) File() string { return s.file }

// Regression: stuck calls were one process-wide number, with no way to tell which
// plugin was stuck. They are counted per step, in the metrics and in the status.
func TestStuckStepsInMetricsAndStatus(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	stuck := fileStep{file: "stuck.so", funcStep: funcStep{name: "step/stuck", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		<-release
		return pluginapi.Allow(), nil
	}}}
	promReg := prometheus.NewPedanticRegistry()
	m := server.NewMetrics(promReg)
	reg := registryOf(t, 10*time.Millisecond, map[string][]chain.Step{
		"ns.guilty": {requiredHeader("x", "1"), stuck},
		"ns.fine":   {requiredHeader("x", "1")},
	})
	a := server.NewAuthorizer(reg, testLogger(t), m)
	for range 2 {
		if resp, err := a.Check(context.Background(), checkRequest("ns.guilty", map[string]string{"x": "1"})); err != nil || resp.GetStatus().GetCode() == 0 {
			t.Fatalf("Check of the stuck config = %v, %v; want denied", resp, err)
		}
	}
	if resp, err := a.Check(context.Background(), checkRequest("ns.fine", map[string]string{"x": "1"})); err != nil || resp.GetStatus().GetCode() != 0 {
		t.Fatalf("Check of the fine config = %v, %v; want allowed", resp, err)
	}

	want := `
# HELP gatehouse_extauth_stuck_step_calls Calls of a step that passed their deadline and have not returned yet, by config_id, step and plugin file; a step with 1024 calls running denies at once, and only it.
# TYPE gatehouse_extauth_stuck_step_calls gauge
gatehouse_extauth_stuck_step_calls{config_id="ns.guilty",plugin="stuck.so",step="step/stuck"} 2
`
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(want), "gatehouse_extauth_stuck_step_calls"); err != nil {
		t.Error(err)
	}
	wantStatus := []server.Status{
		{ID: "ns.fine", State: server.StateAccepted},
		{ID: "ns.guilty", State: server.StateAccepted, Stuck: []chain.StuckStep{{ConfigID: "ns.guilty", Step: "step/stuck", Plugin: "stuck.so", Calls: 2}}},
	}
	if diff := cmp.Diff(wantStatus, reg.Statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}

	free()
	deadline := time.Now().Add(10 * time.Second)
	for chain.Abandoned() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(""), "gatehouse_extauth_stuck_step_calls"); err != nil {
		t.Errorf("after the stuck calls returned: %v", err)
	}
	if got := reg.Statuses()[1].Stuck; len(got) != 0 {
		t.Errorf("status of ns.guilty after the stuck calls returned lists %v", got)
	}
}
