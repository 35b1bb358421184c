package chain_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
	"gatehouse.dev/gatehouse/server/chain"
)

// secret is a header value that must never show in an error.
const secret = "s3cr3t-token"

// Regression: headers a step returned were passed to Envoy verbatim, so a plugin could
// split headers with CR/LF, send a NUL, set a pseudo-header or host, or a hop-by-hop
// header. Each such header now fails the step (500, closed), and the error names the
// step, the field and the header but never the value.
func TestInvalidHeadersFailTheStep(t *testing.T) {
	type headerCase struct {
		name    string
		resp    *pluginapi.AuthorizationResponse
		allow   []string
		wantErr string // "" when the chain allows
		// wantField and wantName are the HeaderError's (for a header error).
		wantField, wantName string
	}
	tests := []headerCase{
		{
			name: "valid headers with tab, space and UTF-8 pass",
			resp: pluginapi.Allow().WithRequestHeader("x-user", "alice\tand bob").
				WithAppendedRequestHeader("x-trace", "café").WithoutRequestHeader("authorization").
				WithResponseHeader("x-ratelimit", "10").WithAddedResponseHeader("set-cookie", "a=b; Path=/").
				WithRequestHeader("x-tok!#$%&'*+-.^_`|~09", "v"),
		},
		{
			name:      "CR LF in a set value splits headers",
			resp:      pluginapi.Allow().WithRequestHeader("x-user", secret+"\r\nx-admin: true"),
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "x-user": the value has a control byte (such as CR, LF or NUL) at offset 12`,
			wantField: "RequestHeaders", wantName: "x-user",
		},
		{
			name:      "LF in an appended value",
			resp:      pluginapi.Allow().WithAppendedRequestHeader("x-trace", secret+"\n"),
			wantErr:   `step/bad: invalid header in the response: AppendRequestHeaders "x-trace": the value has a control byte (such as CR, LF or NUL) at offset 12`,
			wantField: "AppendRequestHeaders", wantName: "x-trace",
		},
		{
			name:      "NUL in a response header value",
			resp:      pluginapi.Allow().WithResponseHeader("x-session", secret+"\x00"),
			wantErr:   `step/bad: invalid header in the response: ResponseHeaders "x-session": the value has a control byte (such as CR, LF or NUL) at offset 12`,
			wantField: "ResponseHeaders", wantName: "x-session",
		},
		{
			name:      "DEL in a repeated response header",
			resp:      pluginapi.Allow().WithAddedResponseHeader("set-cookie", "a=b").WithAddedResponseHeader("set-cookie", secret+"\x7f"),
			wantErr:   `step/bad: invalid header in the response: ResponseHeaderValues "set-cookie": the value has a control byte (such as CR, LF or NUL) at offset 12`,
			wantField: "ResponseHeaderValues", wantName: "set-cookie",
		},
		{
			name:      "CR LF in a name",
			resp:      &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-a\r\nx-admin": "true"}},
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "x-a\r\nx-admin": the name is not an RFC 9110 token (letters, digits and !#$%&'*+-.^_` + "`" + `|~ only)`,
			wantField: "RequestHeaders", wantName: "x-a\r\nx-admin",
		},
		{
			name:      "space in a name",
			resp:      pluginapi.Allow().WithRequestHeader("x user", "1"),
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "x user": the name is not an RFC 9110 token (letters, digits and !#$%&'*+-.^_` + "`" + `|~ only)`,
			wantField: "RequestHeaders", wantName: "x user",
		},
		{
			name:      "empty name",
			resp:      pluginapi.Allow().WithResponseHeader("", "1"),
			wantErr:   `step/bad: invalid header in the response: ResponseHeaders "": empty name`,
			wantField: "ResponseHeaders", wantName: "",
		},
		{
			name:      "a long name is cut",
			resp:      pluginapi.Allow().WithRequestHeader(strings.Repeat("a", 70)+" ", "1"),
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "` + strings.Repeat("a", 64) + `"… (71 bytes): the name is not an RFC 9110 token (letters, digits and !#$%&'*+-.^_` + "`" + `|~ only)`,
			wantField: "RequestHeaders", wantName: strings.Repeat("a", 70) + " ",
		},
		{
			name:      "pseudo-header :authority",
			resp:      pluginapi.Allow().WithRequestHeader(":authority", "evil.example"),
			wantErr:   `step/bad: invalid header in the response: RequestHeaders ":authority": pseudo-headers are Envoy's; a step cannot set or remove them`,
			wantField: "RequestHeaders", wantName: ":authority",
		},
		{
			name:      "pseudo-header removed",
			resp:      pluginapi.Allow().WithoutRequestHeader(":path"),
			wantErr:   `step/bad: invalid header in the response: RemoveRequestHeaders ":path": pseudo-headers are Envoy's; a step cannot set or remove them`,
			wantField: "RemoveRequestHeaders", wantName: ":path",
		},
		{
			name:      "pseudo-header even when allowed",
			resp:      pluginapi.Allow().WithRequestHeader(":authority", "evil.example"),
			allow:     []string{":authority"},
			wantErr:   `step/bad: invalid header in the response: RequestHeaders ":authority": pseudo-headers are Envoy's; a step cannot set or remove them`,
			wantField: "RequestHeaders", wantName: ":authority",
		},
		{
			name:      "host",
			resp:      &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"Host": "evil.example"}},
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "Host": a hop-by-hop or host header; a step cannot set or remove it unless the chain allows it`,
			wantField: "RequestHeaders", wantName: "Host",
		},
		{
			name:  "host when allowed",
			resp:  pluginapi.Allow().WithRequestHeader("host", "other.example"),
			allow: []string{"Host"},
		},
		{
			name:  "allowed hop-by-hop headers do not allow the others",
			resp:  pluginapi.Allow().WithRequestHeader("upgrade", "websocket").WithRequestHeader("connection", "upgrade"),
			allow: []string{"upgrade"}, wantErr: `step/bad: invalid header in the response: RequestHeaders "connection": a hop-by-hop or host header; a step cannot set or remove it unless the chain allows it`,
			wantField: "RequestHeaders", wantName: "connection",
		},
		{
			name:      "deny with CR LF in a response header",
			resp:      pluginapi.Deny(http.StatusUnauthorized, "").WithResponseHeader("www-authenticate", "Bearer\r\nset-cookie: x="+secret),
			wantErr:   `step/bad: invalid header in the response: ResponseHeaders "www-authenticate": the value has a control byte (such as CR, LF or NUL) at offset 6`,
			wantField: "ResponseHeaders", wantName: "www-authenticate",
		},
		{
			// Regression: the CheckResponse could not be encoded, and Envoy got
			// codes.Internal with nothing logged.
			name:      "a value that is not UTF-8",
			resp:      pluginapi.Allow().WithRequestHeader("x-name", "caf\xe9"),
			wantErr:   `step/bad: invalid header in the response: RequestHeaders "x-name": the value is not valid UTF-8, which ext_authz cannot carry back to Envoy`,
			wantField: "RequestHeaders", wantName: "x-name",
		},
		{
			name:    "a deny body that is not UTF-8",
			resp:    pluginapi.Deny(http.StatusForbidden, "caf\xe9"),
			wantErr: `step/bad: invalid deny body: it is not valid UTF-8, which ext_authz cannot carry back to Envoy`,
		},
		{
			name:    "deny with a status that is not an HTTP error or success",
			resp:    pluginapi.Deny(42, ""),
			wantErr: `step/bad: invalid deny status 42: it must be from 200 to 599`,
		},
	}
	hopByHop := []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"}
	for _, h := range hopByHop {
		tests = append(tests, headerCase{
			name:      "hop-by-hop " + h,
			resp:      pluginapi.Allow().WithAppendedRequestHeader(h, "x"),
			wantErr:   `step/bad: invalid header in the response: AppendRequestHeaders "` + h + `": a hop-by-hop or host header; a step cannot set or remove it unless the chain allows it`,
			wantField: "AppendRequestHeaders", wantName: h,
		}, headerCase{
			name:  "hop-by-hop " + h + " when allowed",
			resp:  pluginapi.Allow().WithAppendedRequestHeader(h, "x"),
			allow: []string{h},
		})
	}
	// The bad step alone (its allow would be the answer as it is), in the middle of a
	// chain (merged), and last after a merge: a header is checked on every path.
	layouts := []struct {
		name   string
		before []string // steps before step/bad, each allowing with a header
		after  bool     // a step after step/bad
	}{
		{name: "alone"},
		{name: "middle", before: []string{"step/ok"}, after: true},
		{name: "last", before: []string{"step/ok", "step/ok2"}},
	}
	for _, tt := range tests {
		for _, l := range layouts {
			t.Run(tt.name+"/"+l.name, func(t *testing.T) {
				rec := &recorder{}
				var steps []chain.Step
				for i, name := range l.before {
					steps = append(steps, answers(name, rec, *pluginapi.Allow().WithRequestHeader(fmt.Sprintf("x-ok-%d", i), "1")))
				}
				steps = append(steps, &step{name: "step/bad", rec: rec, fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
					return tt.resp, nil
				}})
				if l.after {
					steps = append(steps, answers("step/after", rec, *pluginapi.Allow()))
				}
				c := &chain.Chain{Timeout: time.Minute, AllowHeaders: tt.allow, Steps: steps}
				out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
				checked := pluginhost.CheckResponse(tt.resp, lowerSet(tt.allow))
				if tt.wantErr == "" {
					if out.Err != nil || !out.Response.Allowed {
						t.Fatalf("outcome = %+v, want allowed", out)
					}
					if checked != nil {
						t.Errorf("the chain allows what CheckResponse refuses: %v", checked)
					}
					return
				}
				if out.Err == nil {
					t.Fatalf("outcome = %+v, want a failure of step/bad", out)
				}
				if got := out.Err.Error(); got != tt.wantErr {
					t.Errorf("Err = %q\nwant  %q", got, tt.wantErr)
				}
				if checked == nil || "step/bad: "+checked.Error() != out.Err.Error() {
					t.Errorf("the chain's error %q is not CheckResponse's %v (plugintest and plugin test use it)", out.Err, checked)
				}
				if strings.Contains(out.Err.Error(), secret) {
					t.Errorf("Err %q shows the header's value", out.Err)
				}
				if out.Step != "step/bad" || out.Response.StatusCode() != http.StatusInternalServerError || out.Response.Allowed {
					t.Errorf("outcome = step %q status %d allowed %v, want step/bad 500 denied", out.Step, out.Response.StatusCode(), out.Response.Allowed)
				}
				if len(out.Response.RequestHeaders)+len(out.Response.ResponseHeaders)+len(out.Response.ResponseHeaderValues) != 0 {
					t.Errorf("the failure carries headers: %+v", out.Response)
				}
				if diff := cmp.Diff(append(slices.Clone(l.before), "step/bad"), rec.got()); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				var he *pluginhost.HeaderError
				if tt.wantField == "" {
					return
				}
				if !errors.As(out.Err, &he) {
					t.Fatalf("Err %v is not a *HeaderError", out.Err)
				}
				if he.Field != tt.wantField || he.Name != tt.wantName {
					t.Errorf("HeaderError = %s %q, want %s %q", he.Field, he.Name, tt.wantField, tt.wantName)
				}
			})
		}
	}
}

// lowerSet is the set of names, lower case, as a Chain makes of its AllowHeaders.
func lowerSet(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[strings.ToLower(n)] = true
	}
	return m
}

// A deny's request headers are never used, so they do not turn a 403 into a 500.
func TestDenyRequestHeadersAreNotChecked(t *testing.T) {
	resp := pluginapi.Forbidden().WithRequestHeader(":authority", "x")
	c := &chain.Chain{Steps: []chain.Step{answers("step/deny", nil, *resp)}}
	out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{})
	if out.Err != nil || out.Response.StatusCode() != http.StatusForbidden {
		t.Errorf("outcome = %+v, want the 403", out)
	}
}
