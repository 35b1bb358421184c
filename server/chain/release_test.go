package chain_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// A released merged allow's storage serves the next runs: none of them may see a
// header, removal or response header of an earlier one.
func TestReleasedOutcomeLeavesNothingBehind(t *testing.T) {
	// The first step answers from the request: x-mark names the header it sets.
	first := &step{name: "step/first", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		mark, _ := req.Header("x-mark")
		resp := pluginapi.Allow().WithRequestHeader("x-set-"+mark, mark).WithResponseHeader("x-resp-"+mark, mark)
		if mark == "a" {
			resp = resp.WithoutRequestHeader("x-drop-a").WithAppendedRequestHeader("x-append-a", "a")
		}
		return resp, nil
	}}
	second := answers("step/second", nil, *pluginapi.Allow().WithRequestHeader("x-second", "2"))
	c := &chain.Chain{ID: "default.release", Steps: []chain.Step{first, second}, Timeout: time.Minute}

	want := func(mark string) *pluginapi.AuthorizationResponse {
		w := &pluginapi.AuthorizationResponse{Allowed: true,
			RequestHeaders:  map[string]string{"x-set-" + mark: mark, "x-second": "2"},
			ResponseHeaders: map[string]string{"x-resp-" + mark: mark},
		}
		if mark == "a" {
			w.RemoveRequestHeaders = []string{"x-drop-a"}
			w.AppendRequestHeaders = map[string]string{"x-append-a": "a"}
		}
		return w
	}
	// Concurrent runs, so released runs are reused by other goroutines too.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				mark := []string{"a", "b", "c"}[(g+i)%3]
				out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{Headers: map[string]string{"x-mark": mark}})
				if diff := cmp.Diff(want(mark), out.Response, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("run %d of goroutine %d, mark %q (-want +got):\n%s", i, g, mark, diff)
					return
				}
				out.Release()
			}
		}()
	}
	wg.Wait()
}

// OnStep hears of every step that answered, in order, with the time it took.
func TestOnStepTimesEveryStep(t *testing.T) {
	const nap = 10 * time.Millisecond
	slow := &step{name: "step/slow", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		time.Sleep(nap)
		return pluginapi.Allow(), nil
	}}
	for _, tc := range []struct {
		name      string
		steps     []chain.Step
		wantSteps []int
		slowStep  int // index of the step that sleeps, -1 for none
	}{
		{name: "all allow", steps: []chain.Step{answers("step/a", nil, *pluginapi.Allow()), slow, answers("step/c", nil, *pluginapi.Allow())}, wantSteps: []int{0, 1, 2}, slowStep: 1},
		{name: "deny stops", steps: []chain.Step{slow, answers("step/deny", nil, *pluginapi.Forbidden()), answers("step/c", nil, *pluginapi.Allow())}, wantSteps: []int{0, 1}, slowStep: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var took []time.Duration
			c := &chain.Chain{ID: "default.timed", Steps: tc.steps, Timeout: time.Minute,
				OnStep: func(_ context.Context, i int, d time.Duration) { got, took = append(got, i), append(took, d) }}
			out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
			out.Release()
			if diff := cmp.Diff(tc.wantSteps, got); diff != "" {
				t.Fatalf("steps reported (-want +got):\n%s", diff)
			}
			if took[tc.slowStep] < nap {
				t.Errorf("step %d slept %s but was reported to take %s", tc.slowStep, nap, took[tc.slowStep])
			}
		})
	}
}
