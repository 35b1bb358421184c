package plugintest

import (
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Result is the outcome of one Authorize call, with assertions that report to the test
// and return the Result, so they chain.
type Result struct {
	t testing.TB
	// Response is the plugin's answer; nil when Err is set.
	Response *pluginapi.AuthorizationResponse
	// Err is why the server would deny with 500: an error, a panic, a missed deadline
	// or a header Envoy must not get.
	Err error
}

func (r *Result) ok() bool {
	r.t.Helper()
	if r.Err != nil {
		r.t.Errorf("Authorize failed: %v", r.Err)
		return false
	}
	return true
}

// Matches asserts every expectation of w.
func (r *Result) Matches(w Want) *Result {
	r.t.Helper()
	if err := w.Validate(); err != nil {
		r.t.Fatalf("plugintest: %v", err)
	}
	for _, m := range w.Mismatches(r.Response, r.Err) {
		r.t.Errorf("%s", m)
	}
	return r
}

// Allowed asserts the request was allowed.
func (r *Result) Allowed() *Result {
	r.t.Helper()
	if r.ok() && !r.Response.Allowed {
		r.t.Errorf("got %s, want allow", Got(r.Response, nil))
	}
	return r
}

// Denied asserts the request was denied with status (0: any status).
func (r *Result) Denied(status int) *Result {
	r.t.Helper()
	return r.Matches(Want{Decision: Deny, Status: status})
}

// Body asserts the deny body.
func (r *Result) Body(want string) *Result {
	r.t.Helper()
	if r.ok() && r.Response.Body != want {
		r.t.Errorf("body: got %q, want %q", r.Response.Body, want)
	}
	return r
}

// RequestHeader asserts an allow sets (or appends) the request header name to value.
func (r *Result) RequestHeader(name, value string) *Result {
	r.t.Helper()
	return r.headers(headerMismatches("request header", r.requestHeaders(), map[string]string{name: value}))
}

// ResponseHeader asserts the client gets the header name with value.
func (r *Result) ResponseHeader(name, value string) *Result {
	r.t.Helper()
	return r.headers(headerMismatches("response header", r.responseHeaders(), map[string]string{name: value}))
}

// NoHeader asserts name is set neither on the request nor on the response.
func (r *Result) NoHeader(name string) *Result {
	r.t.Helper()
	if !r.ok() {
		return r
	}
	for _, m := range (Want{Decision: decision(r.Response), AbsentHeaders: []string{name}}).Mismatches(r.Response, nil) {
		r.t.Errorf("%s", m)
	}
	return r
}

// Failed asserts the call failed (the server would deny with 500) with an error that
// contains substr.
func (r *Result) Failed(substr string) *Result {
	r.t.Helper()
	switch {
	case r.Err == nil:
		r.t.Errorf("got %s, want a failure containing %q", Got(r.Response, nil), substr)
	case !strings.Contains(r.Err.Error(), substr):
		r.t.Errorf("failed with %q, want an error containing %q", r.Err, substr)
	}
	return r
}

func (r *Result) headers(mismatches []string) *Result {
	r.t.Helper()
	if r.ok() {
		for _, m := range mismatches {
			r.t.Errorf("%s", m)
		}
	}
	return r
}

func (r *Result) requestHeaders() map[string]string {
	if r.Response == nil {
		return nil
	}
	return requestHeaders(r.Response)
}

func (r *Result) responseHeaders() map[string]string {
	if r.Response == nil {
		return nil
	}
	return responseHeaders(r.Response)
}

func decision(resp *pluginapi.AuthorizationResponse) string {
	if resp.Allowed {
		return Allow
	}
	return Deny
}
