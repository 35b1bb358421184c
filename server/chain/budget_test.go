package chain_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// releaser closes release once, at the end of a test or when the test says so.
func releaser(t *testing.T) (release chan struct{}, free func()) {
	release = make(chan struct{})
	var once sync.Once
	free = func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	return release, free
}

// Regression: the bound on stuck calls was one counter for the whole process, so a
// plugin whose Authorize never returned, once it had used up the bound, made every
// AuthConfig deny, including those whose steps were fine, until a restart.
func TestStuckStepDeniesOnlyItsOwnCalls(t *testing.T) {
	waitAbandoned(t, 0)
	const bound = 2
	defer chain.SetMaxCallsPerStep(bound)()
	release, free := releaser(t)
	rec := &recorder{}
	slow, _ := stubborn("step/stuck", rec, release)
	logs := &logBuffer{}
	guilty := &chain.Chain{ID: "ns.guilty", Timeout: 10 * time.Millisecond, Steps: []chain.Step{slow}, Log: zerolog.New(logs)}
	for i := range bound {
		if out := guilty.Run(context.Background(), &pluginapi.AuthorizationRequest{}); !chain.IsDeadline(out.Err) {
			t.Fatalf("run %d: Err = %v, want a deadline error", i, out.Err)
		}
	}
	if got := chain.Abandoned(); got != bound {
		t.Fatalf("Abandoned() = %d, want %d", got, bound)
	}

	// Another config's step is called and allows as usual.
	fine := &recorder{}
	other := &chain.Chain{ID: "ns.other", Timeout: time.Minute, Steps: []chain.Step{answers("step/fine", fine, *pluginapi.Allow())}}
	for range 2 * bound {
		if out := other.Run(context.Background(), &pluginapi.AuthorizationRequest{}); out.Err != nil || !out.Response.Allowed {
			t.Fatalf("other chain while step/stuck is at its bound: outcome %+v, want allowed", out)
		}
	}
	if got := len(fine.got()); got != 2*bound {
		t.Errorf("step/fine called %d times, want %d", got, 2*bound)
	}

	// The guilty step is at its bound: its chain denies at once without calling it.
	for range 3 {
		guilty.Run(context.Background(), &pluginapi.AuthorizationRequest{})
	}
	out := guilty.Run(context.Background(), &pluginapi.AuthorizationRequest{})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "step/stuck: not called: 2 calls of this step still run, 2 of them past their deadline") {
		t.Fatalf("Err of the stuck step past its bound = %v, want a not-called error", out.Err)
	}
	if out.Response.StatusCode() != http.StatusInternalServerError || out.Step != "step/stuck" {
		t.Errorf("outcome past the bound = step %q status %d, want step/stuck 500", out.Step, out.Response.StatusCode())
	}
	if got := len(rec.got()); got != bound {
		t.Errorf("stuck step called %d times, want %d (not past its bound)", got, bound)
	}

	want := []chain.StuckStep{{ConfigID: "ns.guilty", Step: "step/stuck", Calls: bound}}
	if diff := cmp.Diff(want, guilty.Stuck()); diff != "" {
		t.Errorf("guilty.Stuck() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, chain.Stuck()); diff != "" {
		t.Errorf("chain.Stuck() (-want +got):\n%s", diff)
	}
	if got := other.Stuck(); len(got) != 0 {
		t.Errorf("other.Stuck() = %v, want none", got)
	}

	free()
	waitAbandoned(t, 0)
	if got := chain.Stuck(); len(got) != 0 {
		t.Errorf("chain.Stuck() after the calls returned = %v, want none", got)
	}
	if out := guilty.Run(context.Background(), &pluginapi.AuthorizationRequest{}); out.Err != nil || !out.Response.Allowed {
		t.Errorf("guilty chain after its calls returned: outcome %+v, want allowed", out)
	}
	// The log names the stuck step once per change of state, not once per request.
	// The last two lines come from the two returning calls, in either order.
	wantLogs := []string{
		`{"level":"warn","config_id":"ns.guilty","step":"step/stuck","message":"step call passed its deadline and still runs; the plugin ignores its context"}`,
		`{"level":"error","config_id":"ns.guilty","step":"step/stuck","running":2,"stuck":2,"message":"step has no call slot left; its requests are denied until its calls return"}`,
		`{"level":"info","config_id":"ns.guilty","step":"step/stuck","running":1,"message":"step has call slots again"}`,
		`{"level":"info","config_id":"ns.guilty","step":"step/stuck","message":"every stuck call of the step has returned"}`,
	}
	if diff := cmp.Diff(wantLogs, logs.lines(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// logBuffer is a log sink safe for the goroutines of abandoned calls.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.buf.String()), "\n")
}

// Regression: the bound was checked with a Load before the call and counted with an
// Add after its deadline, so calls that started together all passed the check and
// the count overshot the bound (1,040 against 1,024).
func TestConcurrentStuckCallsNeverOvershootTheBound(t *testing.T) {
	waitAbandoned(t, 0)
	const bound, callers = 4, 64
	defer chain.SetMaxCallsPerStep(bound)()
	release, free := releaser(t)
	slow, _ := stubborn("step/stuck", nil, release)
	c := &chain.Chain{ID: "ns.guilty", Timeout: 50 * time.Millisecond, Steps: []chain.Step{slow}}

	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		deadline, refused int
	)
	start := make(chan struct{})
	for range callers {
		wg.Go(func() {
			<-start
			out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case chain.IsDeadline(out.Err):
				deadline++
			case out.Err != nil && strings.Contains(out.Err.Error(), "not called"):
				refused++
			default:
				t.Errorf("unexpected outcome %+v", out)
			}
		})
	}
	close(start)
	wg.Wait()
	if deadline != bound || refused != callers-bound {
		t.Errorf("%d calls passed their deadline and %d were refused, want %d and %d", deadline, refused, bound, callers-bound)
	}
	if got := chain.Abandoned(); got != bound {
		t.Errorf("Abandoned() = %d, want exactly the bound %d", got, bound)
	}
	free()
	waitAbandoned(t, 0)
}
