package chain_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// recorder notes which steps were called, in order.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, name)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// step is a chain.Step whose decision is a function; it records every call.
type step struct {
	name string
	rec  *recorder
	fn   func(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error)
}

func (s *step) Name() string { return s.name }

func (s *step) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if s.rec != nil {
		s.rec.add(s.name)
	}
	return s.fn(ctx, req)
}

// answers returns a step that always gives resp (a fresh copy each call).
func answers(name string, rec *recorder, resp pluginapi.AuthorizationResponse) *step {
	return &step{name: name, rec: rec, fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		r := resp
		return &r, nil
	}}
}

func TestRunStepsInOrderFirstDenyStops(t *testing.T) {
	deny := pluginapi.Deny(http.StatusUnauthorized, "who are you").WithResponseHeader("www-authenticate", "Bearer")
	tests := []struct {
		name      string
		steps     func(rec *recorder) []chain.Step
		wantCalls []string
		want      chain.Outcome
	}{
		{
			name: "all allow",
			steps: func(rec *recorder) []chain.Step {
				return []chain.Step{
					answers("step/a", rec, *pluginapi.Allow()),
					answers("step/b", rec, *pluginapi.Allow()),
					answers("step/c", rec, *pluginapi.Allow()),
				}
			},
			wantCalls: []string{"step/a", "step/b", "step/c"},
			want:      chain.Outcome{Response: &pluginapi.AuthorizationResponse{Allowed: true}},
		},
		{
			name: "deny in the middle stops the chain",
			steps: func(rec *recorder) []chain.Step {
				return []chain.Step{
					answers("step/a", rec, *pluginapi.Allow().WithRequestHeader("x-a", "1")),
					answers("step/b", rec, *deny),
					answers("step/c", rec, *pluginapi.Allow()),
				}
			},
			wantCalls: []string{"step/a", "step/b"},
			want:      chain.Outcome{Response: deny, Step: "step/b"},
		},
		{
			name: "deny first calls nothing else",
			steps: func(rec *recorder) []chain.Step {
				return []chain.Step{
					answers("step/a", rec, *pluginapi.Forbidden()),
					answers("step/b", rec, *pluginapi.Allow()),
				}
			},
			wantCalls: []string{"step/a"},
			want:      chain.Outcome{Response: pluginapi.Forbidden(), Step: "step/a"},
		},
		{
			name:      "no steps allows",
			steps:     func(*recorder) []chain.Step { return nil },
			wantCalls: nil,
			want:      chain.Outcome{Response: &pluginapi.AuthorizationResponse{Allowed: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			c := &chain.Chain{ID: "default.test", Steps: tt.steps(rec), Timeout: time.Minute}
			got := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
			if diff := cmp.Diff(tt.wantCalls, rec.got()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(chain.Outcome{})); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLaterStepSeesEarlierHeadersAndState(t *testing.T) {
	var seen map[string]string
	var seenState any
	c := &chain.Chain{Steps: []chain.Step{
		&step{name: "step/one", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
			req.State["user"] = "alice"
			return pluginapi.Allow().
				WithRequestHeader("x-user", "alice").
				WithAppendedRequestHeader("x-trace", "one").
				WithoutRequestHeader("authorization"), nil
		}},
		&step{name: "step/two", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
			seen = make(map[string]string, len(req.Headers))
			for k, v := range req.Headers {
				seen[k] = v
			}
			seenState = req.State["user"]
			return pluginapi.Allow(), nil
		}},
	}}
	req := &pluginapi.AuthorizationRequest{Headers: map[string]string{"authorization": "Bearer t", "x-trace": "envoy", "accept": "*/*"}}
	out := c.Run(context.Background(), req)
	if !out.Response.Allowed {
		t.Fatalf("outcome = %+v, want allowed", out)
	}
	want := map[string]string{"x-user": "alice", "x-trace": "envoy,one", "accept": "*/*"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("headers step two saw (-want +got):\n%s", diff)
	}
	if seenState != "alice" {
		t.Errorf("State[user] step two saw = %v, want alice", seenState)
	}
}

func TestMergedAllow(t *testing.T) {
	tests := []struct {
		name        string
		headers     map[string]string
		responses   []*pluginapi.AuthorizationResponse
		want        *pluginapi.AuthorizationResponse
		wantHeaders map[string]string // what a step after the last would see
	}{
		{
			name:        "set",
			headers:     map[string]string{"x-user": "mallory"},
			responses:   []*pluginapi.AuthorizationResponse{pluginapi.Allow().WithRequestHeader("x-user", "alice")},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-user": "alice"}},
			wantHeaders: map[string]string{"x-user": "alice"},
		},
		{
			name:    "set then append is one set",
			headers: map[string]string{"x-trace": "envoy"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithRequestHeader("x-trace", "one"),
				pluginapi.Allow().WithAppendedRequestHeader("x-trace", "two"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-trace": "one,two"}},
			wantHeaders: map[string]string{"x-trace": "one,two"},
		},
		{
			name:    "append then append",
			headers: map[string]string{"x-trace": "envoy"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithAppendedRequestHeader("x-trace", "one"),
				pluginapi.Allow().WithAppendedRequestHeader("x-trace", "two"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, AppendRequestHeaders: map[string]string{"x-trace": "one,two"}},
			wantHeaders: map[string]string{"x-trace": "envoy,one,two"},
		},
		{
			name:        "append to an absent header",
			responses:   []*pluginapi.AuthorizationResponse{pluginapi.Allow().WithAppendedRequestHeader("x-trace", "one")},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, AppendRequestHeaders: map[string]string{"x-trace": "one"}},
			wantHeaders: map[string]string{"x-trace": "one"},
		},
		{
			name:    "append then set drops the append",
			headers: map[string]string{"x-trace": "envoy"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithAppendedRequestHeader("x-trace", "one"),
				pluginapi.Allow().WithRequestHeader("x-trace", "two"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-trace": "two"}},
			wantHeaders: map[string]string{"x-trace": "two"},
		},
		{
			name:    "remove then set is a set",
			headers: map[string]string{"authorization": "Bearer t"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithoutRequestHeader("authorization"),
				pluginapi.Allow().WithRequestHeader("authorization", "Basic x"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"authorization": "Basic x"}},
			wantHeaders: map[string]string{"authorization": "Basic x"},
		},
		{
			name:    "set then remove is a remove",
			headers: map[string]string{"authorization": "Bearer t"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithRequestHeader("authorization", "Basic x"),
				pluginapi.Allow().WithoutRequestHeader("authorization"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RemoveRequestHeaders: []string{"authorization"}},
			wantHeaders: map[string]string{},
		},
		{
			// Regression: the append used to stay an append, so the upstream got the
			// removed original value back ("envoy,one") while the steps saw "one".
			name:    "remove then append is a set",
			headers: map[string]string{"x-trace": "envoy"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithoutRequestHeader("x-trace"),
				pluginapi.Allow().WithAppendedRequestHeader("x-trace", "one"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-trace": "one"}},
			wantHeaders: map[string]string{"x-trace": "one"},
		},
		{
			// Regression: removing twice listed the header twice and a later set undid
			// only one of them, so Envoy set the header and then removed it.
			name:    "remove twice then set is a set",
			headers: map[string]string{"cookie": "a=b"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithoutRequestHeader("cookie"),
				pluginapi.Allow().WithoutRequestHeader("cookie"),
				pluginapi.Allow().WithRequestHeader("cookie", "c=d"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"cookie": "c=d"}},
			wantHeaders: map[string]string{"cookie": "c=d"},
		},
		{
			name:    "removes keep their order",
			headers: map[string]string{"a": "1", "b": "2", "c": "3"},
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithoutRequestHeader("b"),
				pluginapi.Allow().WithoutRequestHeader("a"),
			},
			want:        &pluginapi.AuthorizationResponse{Allowed: true, RemoveRequestHeaders: []string{"b", "a"}},
			wantHeaders: map[string]string{"c": "3"},
		},
		{
			// Regression: names set through the response maps directly kept their case,
			// so the next step's lookups and removes missed them.
			name:    "names are lower-cased",
			headers: map[string]string{"x-user": "mallory", "authorization": "Bearer t"},
			responses: []*pluginapi.AuthorizationResponse{{
				Allowed:              true,
				RequestHeaders:       map[string]string{"X-User": "alice"},
				RemoveRequestHeaders: []string{"Authorization"},
				ResponseHeaders:      map[string]string{"Cache-Control": "no-store"},
			}},
			want: &pluginapi.AuthorizationResponse{
				Allowed:              true,
				RequestHeaders:       map[string]string{"x-user": "alice"},
				RemoveRequestHeaders: []string{"authorization"},
				ResponseHeaders:      map[string]string{"cache-control": "no-store"},
			},
			wantHeaders: map[string]string{"x-user": "alice"},
		},
		{
			// Regression: repeated response headers (Set-Cookie) of allowing steps were
			// dropped from the merged allow.
			name: "repeated response headers of every step are kept",
			responses: []*pluginapi.AuthorizationResponse{
				{Allowed: true, ResponseHeaderValues: map[string][]string{"Set-Cookie": {"a=1", "b=2"}}},
				{Allowed: true, ResponseHeaderValues: map[string][]string{"set-cookie": {"c=3"}}},
			},
			want: &pluginapi.AuthorizationResponse{Allowed: true, ResponseHeaderValues: map[string][]string{"set-cookie": {"a=1", "b=2", "c=3"}}},
		},
		{
			name: "response headers: the later step wins",
			responses: []*pluginapi.AuthorizationResponse{
				pluginapi.Allow().WithResponseHeader("x-served-by", "one").WithResponseHeader("x-one", "1"),
				pluginapi.Allow().WithResponseHeader("x-served-by", "two"),
			},
			want: &pluginapi.AuthorizationResponse{Allowed: true, ResponseHeaders: map[string]string{"x-served-by": "two", "x-one": "1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []chain.Step
			for i, r := range tt.responses {
				steps = append(steps, answers("step/"+string(rune('a'+i)), nil, *r))
			}
			var seen map[string]string
			steps = append(steps, &step{name: "step/last", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				seen = make(map[string]string, len(req.Headers))
				for k, v := range req.Headers {
					seen[k] = v
				}
				return pluginapi.Allow(), nil
			}})
			headers := make(map[string]string, len(tt.headers))
			for k, v := range tt.headers {
				headers[k] = v
			}
			out := (&chain.Chain{Steps: steps}).Run(context.Background(), &pluginapi.AuthorizationRequest{Headers: headers})
			if out.Err != nil {
				t.Fatalf("Run: %v", out.Err)
			}
			if diff := cmp.Diff(tt.want, out.Response, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("merged response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHeaders, seen, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("headers after the chain (-want +got):\n%s", diff)
			}
			// Without the probe the steps' last allow is the chain's last, which Run
			// takes as the answer as it is when nothing was merged before it and a
			// merge would only copy it: the answer must be the same either way.
			req := &pluginapi.AuthorizationRequest{Headers: maps.Clone(tt.headers)}
			out = (&chain.Chain{Steps: steps[:len(steps)-1]}).Run(context.Background(), req)
			if out.Err != nil {
				t.Fatalf("Run without the probe: %v", out.Err)
			}
			if diff := cmp.Diff(tt.want, out.Response, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("response without the probe step (-want +got):\n%s", diff)
			}
			// Regression: the adopted answer skipped updating req.Headers, which Run
			// promises (the OIDC front of the integration tests read the client's
			// forged x-id-token from it).
			if diff := cmp.Diff(tt.wantHeaders, req.Headers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("request headers after the chain without the probe step (-want +got):\n%s", diff)
			}
		})
	}
}

type errPlugin struct{}

func (errPlugin) Error() string { return "redis down" }

func TestFailuresDenyWith500(t *testing.T) {
	cause := errPlugin{}
	tests := []struct {
		name    string
		fn      func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error)
		wantMsg string
		check   func(t *testing.T, err error)
	}{
		{
			name: "error",
			fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				return nil, cause
			},
			wantMsg: "step/bad: redis down",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, cause) {
					t.Errorf("errors.Is(%v, cause) = false", err)
				}
			},
		},
		{
			name: "error with a response",
			fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				return pluginapi.Allow(), cause
			},
			wantMsg: "step/bad: redis down",
		},
		{
			name: "panic",
			fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				var m map[string]int
				m["x"]++
				return nil, nil
			},
			wantMsg: "step/bad: panic: assignment to entry in nil map",
			check: func(t *testing.T, err error) {
				var pe *chain.PanicError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *PanicError", err)
				}
				if pe.Step != "step/bad" {
					t.Errorf("PanicError.Step = %q, want step/bad", pe.Step)
				}
				if !strings.Contains(string(pe.Stack), "chain_test.go") {
					t.Errorf("PanicError.Stack does not show the panicking frame:\n%s", pe.Stack)
				}
			},
		},
		{
			name: "nil response",
			fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				return nil, nil
			},
			wantMsg: "step/bad: returned neither a response nor an error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			c := &chain.Chain{Steps: []chain.Step{
				answers("step/ok", rec, *pluginapi.Allow().WithRequestHeader("x-a", "1")),
				&step{name: "step/bad", rec: rec, fn: tt.fn},
				answers("step/after", rec, *pluginapi.Allow()),
			}}
			out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
			if out.Err == nil {
				t.Fatalf("Run: Err = nil, want %q", tt.wantMsg)
			}
			if out.Err.Error() != tt.wantMsg {
				t.Errorf("Err = %q, want %q", out.Err, tt.wantMsg)
			}
			if out.Step != "step/bad" {
				t.Errorf("Step = %q, want step/bad", out.Step)
			}
			want := &pluginapi.AuthorizationResponse{Status: http.StatusInternalServerError}
			if diff := cmp.Diff(want, out.Response, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"step/ok", "step/bad"}, rec.got()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if chain.IsDeadline(out.Err) {
				t.Errorf("IsDeadline(%v) = true", out.Err)
			}
			if tt.check != nil {
				tt.check(t, out.Err)
			}
		})
	}
}

// waitAbandoned waits until chain.Abandoned() is want; the counter drops on another
// goroutine once the step returns.
func waitAbandoned(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for chain.Abandoned() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Abandoned() = %d, want %d", chain.Abandoned(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// stubborn returns a step that ignores its context and returns only when release is
// closed, and a channel that is closed once it has been entered.
func stubborn(name string, rec *recorder, release <-chan struct{}) (*step, <-chan struct{}) {
	entered := make(chan struct{})
	var once sync.Once
	return &step{name: name, rec: rec, fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		once.Do(func() { close(entered) })
		<-release
		return pluginapi.Allow(), nil
	}}, entered
}

func TestStepIgnoringItsContextIsAbandoned(t *testing.T) {
	waitAbandoned(t, 0)
	release := make(chan struct{})
	rec := &recorder{}
	slow, _ := stubborn("step/slow", rec, release)
	c := &chain.Chain{Timeout: 20 * time.Millisecond, Steps: []chain.Step{slow, answers("step/after", rec, *pluginapi.Allow())}}

	out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
	if !chain.IsDeadline(out.Err) {
		t.Fatalf("Err = %v, want a deadline error", out.Err)
	}
	if out.Step != "step/slow" || out.Response.StatusCode() != http.StatusInternalServerError {
		t.Errorf("outcome = step %q status %d, want step/slow 500", out.Step, out.Response.StatusCode())
	}
	if got := chain.Abandoned(); got != 1 {
		t.Errorf("Abandoned() = %d while the step still runs, want 1", got)
	}
	close(release)
	waitAbandoned(t, 0)
	if diff := cmp.Diff([]string{"step/slow"}, rec.got()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestDeadlines(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // the chain's
		parent  func() (context.Context, context.CancelFunc)
		wantErr error
	}{
		{
			name:    "chain timeout",
			timeout: 20 * time.Millisecond,
			parent:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			wantErr: context.DeadlineExceeded,
		},
		{
			name:    "parent deadline shorter than the chain timeout",
			timeout: time.Hour,
			parent: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			wantErr: context.DeadlineExceeded,
		},
		{
			name: "parent deadline and no chain timeout",
			parent: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			wantErr: context.DeadlineExceeded,
		},
		{
			name:    "parent cancelled",
			timeout: time.Hour,
			parent: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
			wantErr: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hadDeadline := make(chan bool, 1)
			waits := &step{name: "step/waits", fn: func(ctx context.Context, _ *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				_, ok := ctx.Deadline()
				hadDeadline <- ok
				<-ctx.Done()
				return nil, ctx.Err()
			}}
			ctx, cancel := tt.parent()
			defer cancel()
			out := (&chain.Chain{Timeout: tt.timeout, Steps: []chain.Step{waits}}).Run(ctx, &pluginapi.AuthorizationRequest{})
			if !errors.Is(out.Err, tt.wantErr) {
				t.Fatalf("Err = %v, want %v", out.Err, tt.wantErr)
			}
			if got, want := chain.IsDeadline(out.Err), tt.wantErr == context.DeadlineExceeded; got != want {
				t.Errorf("IsDeadline = %v, want %v", got, want)
			}
			if out.Response.StatusCode() != http.StatusInternalServerError {
				t.Errorf("status = %d, want 500", out.Response.StatusCode())
			}
			if ok := <-hadDeadline; tt.wantErr == context.DeadlineExceeded && !ok {
				t.Errorf("the step's context had no deadline")
			}
			waitAbandoned(t, 0)
		})
	}
}
