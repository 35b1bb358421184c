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
