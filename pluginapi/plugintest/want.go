package plugintest

import (
	"fmt"
	"sort"
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Decisions a Want can expect.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Want is what a case expects of one Authorize call. `gatehouse plugin test` reads the
// same fields from its cases file, so a table test and a case against the built .so
// mean the same thing.
type Want struct {
	// Decision is Allow or Deny.
	Decision string `json:"decision"`
	// Status is the deny status (0: any; a deny without one is 403).
	Status int `json:"status,omitempty"`
	// Body, when set, is the deny body.
	Body *string `json:"body,omitempty"`
	// RequestHeaders must be set (or appended) for the upstream with these values.
	RequestHeaders map[string]string `json:"requestHeaders,omitempty"`
	// ResponseHeaders must go to the client with these values (a repeated header's
	// lines joined with ",").
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// AbsentHeaders are set neither on the request nor on the response.
	AbsentHeaders []string `json:"absentHeaders,omitempty"`
}

// String is the expectation in a word or two: "allow", "deny 401".
func (w Want) String() string {
	if w.Decision == Deny && w.Status != 0 {
		return fmt.Sprintf("deny %d", w.Status)
	}
	return w.Decision
}

// Validate reports a Want that cannot be checked.
func (w Want) Validate() error {
	if w.Decision != Allow && w.Decision != Deny {
		return fmt.Errorf("decision %q: want %q or %q", w.Decision, Allow, Deny)
	}
	if w.Decision == Allow && (w.Status != 0 || w.Body != nil) {
		return fmt.Errorf("status and body are for a deny, not an allow")
	}
	return nil
}

// Got is an outcome in the words String uses: "allow", "deny 403", or the error.
func Got(resp *pluginapi.AuthorizationResponse, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case resp.Allowed:
		return Allow
	}
	return fmt.Sprintf("deny %d", resp.StatusCode())
}

// Mismatches lists every way the outcome (resp, err) differs from w; none when it
// matches. An error never matches: the server would deny with 500.
func (w Want) Mismatches(resp *pluginapi.AuthorizationResponse, err error) []string {
	if err != nil {
		return []string{"failed: " + err.Error()}
	}
	var out []string
	if got := Got(resp, nil); (w.Decision == Allow) != resp.Allowed {
		out = append(out, fmt.Sprintf("decision: got %s, want %s", got, w.Decision))
	}
	if !resp.Allowed && w.Status != 0 && resp.StatusCode() != w.Status {
		out = append(out, fmt.Sprintf("status: got %d, want %d", resp.StatusCode(), w.Status))
	}
	if w.Body != nil && resp.Body != *w.Body {
		out = append(out, fmt.Sprintf("body: got %q, want %q", resp.Body, *w.Body))
	}
	req, res := requestHeaders(resp), responseHeaders(resp)
	out = append(out, headerMismatches("request header", req, w.RequestHeaders)...)
	out = append(out, headerMismatches("response header", res, w.ResponseHeaders)...)
	for _, name := range w.AbsentHeaders {
		k := strings.ToLower(name)
		if v, ok := req[k]; ok {
			out = append(out, fmt.Sprintf("request header %s: got %q, want it absent", k, v))
		}
		if v, ok := res[k]; ok {
			out = append(out, fmt.Sprintf("response header %s: got %q, want it absent", k, v))
		}
	}
	return out
}

func headerMismatches(what string, got, want map[string]string) []string {
	var out []string
	for _, name := range sortedKeys(want) {
		k := strings.ToLower(name)
		switch v, ok := got[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s: absent, want %q", what, k, want[name]))
		case v != want[name]:
			out = append(out, fmt.Sprintf("%s %s: got %q, want %q", what, k, v, want[name]))
		}
	}
	return out
}

// requestHeaders are the headers an allow sets or appends for the upstream; a deny's
// are never used.
func requestHeaders(r *pluginapi.AuthorizationResponse) map[string]string {
	out := map[string]string{}
	if !r.Allowed {
		return out
	}
	for k, v := range r.RequestHeaders {
		out[strings.ToLower(k)] = v
	}
	for k, v := range r.AppendRequestHeaders {
		k = strings.ToLower(k)
		if old, ok := out[k]; ok {
			v = old + "," + v
		}
		out[k] = v
	}
	return out
}

func responseHeaders(r *pluginapi.AuthorizationResponse) map[string]string {
	out := map[string]string{}
	for k, v := range r.ResponseHeaders {
		out[strings.ToLower(k)] = v
	}
	for k, vs := range r.ResponseHeaderValues {
		k = strings.ToLower(k)
		if old, ok := out[k]; ok {
			vs = append([]string{old}, vs...)
		}
		out[k] = strings.Join(vs, ",")
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
