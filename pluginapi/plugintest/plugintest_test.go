package plugintest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/plugintest"
)

const goodConfig = `{"Header": "x-api-key", "Allowed": ["alpha"]}`

func TestNewRequest(t *testing.T) {
	b := plugintest.NewRequest("POST", "/api?x=1").Header("X-Api-Key", "alpha").Header("x-api-key", "beta").
		Headers(map[string]string{"Content-Type": "text/plain"}).Body("hello").Host("api.example.com").Scheme("https").
		ContextExtension("config_id", "ns.a").Source("127.0.0.1:5000", "spiffe://a").RequestID("r1").State("user", "alice")
	want := &pluginapi.AuthorizationRequest{
		Method: "POST", Path: "/api?x=1", Host: "api.example.com", Scheme: "https", Protocol: "HTTP/1.1",
		Headers:           map[string]string{"x-api-key": "alpha,beta", "content-type": "text/plain"},
		Body:              []byte("hello"),
		ContextExtensions: map[string]string{"config_id": "ns.a"},
		Source:            pluginapi.Peer{Address: "127.0.0.1:5000", Principal: "spiffe://a"},
		RequestID:         "r1",
		State:             map[string]any{"user": "alice"},
	}
	first := b.Build()
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	first.Headers["x-api-key"] = "changed"
	if got := b.Build().Headers["x-api-key"]; got != "alpha,beta" {
		t.Errorf("a second Build sees the first request's edit: x-api-key %q", got)
	}
}

// The errors are the server's, word for word (server/build_test.go checks the server's
// side with the same plugin shape; integration tests compare the two on the same config).
func TestNewServiceErrors(t *testing.T) {
	tests := []struct {
		name, config, wantErr string
	}{
		{"unknown field", `{"Header": "x", "Allow": ["a"]}`, `config: unknown field "Allow" (config type plugintest_test.keyConfig)`},
		{"wrong type", `{"Header": 7}`, `config: field "Header": got number, want string`},
		{"trailing data", `{"Header": "x"} {}`, `config: trailing data after the config object`},
		{"not an object", `["x"]`, `config: field "": got array, want plugintest_test.keyConfig`},
		{"rejected by GetAuthService", `{}`, `GetAuthService: keyplugin: Header is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := plugintest.NewService(context.Background(), keyPlugin{}, tt.config)
			if err == nil {
				t.Fatalf("NewService = %+v, want error %q", svc, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("NewService error\n got %q\nwant %q", err, tt.wantErr)
			}
		})
	}
}

func TestDecodeConfig(t *testing.T) {
	got, err := plugintest.DecodeConfig(keyPlugin{}, goodConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := &keyConfig{Header: "x-api-key", Allowed: []string{"alpha"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeConfig (-want +got):\n%s", diff)
	}
}

func TestCall(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		req     *pluginapi.AuthorizationRequest
		want    *pluginapi.AuthorizationResponse
		wantErr string
	}{
		{
			name: "allowed",
			req:  plugintest.NewRequest("GET", "/").Header("X-Api-Key", "alpha").Build(),
			want: &pluginapi.AuthorizationResponse{Allowed: true, RequestHeaders: map[string]string{"x-key-checked": "true"},
				AppendRequestHeaders: map[string]string{"x-trace": "ALPHA"}, RemoveRequestHeaders: []string{"x-api-key"}},
		},
		{name: "panic", mode: "panic", req: plugintest.NewRequest("GET", "/").Build(), wantErr: "panic: keyplugin: boom"},
		{name: "hang", mode: "hang", req: plugintest.NewRequest("GET", "/").Build(), wantErr: "Authorize did not return within 50ms: context deadline exceeded"},
		{
			name: "header Envoy must not get", mode: "bad-header", req: plugintest.NewRequest("GET", "/").Build(),
			wantErr: `invalid header in the response: RequestHeaders "x-user": the value has a control byte (such as CR, LF or NUL) at offset 5`,
		},
		{name: "nil answer", mode: "nil", req: plugintest.NewRequest("GET", "/").Build(), wantErr: "returned neither a response nor an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := plugintest.Start(t, keyPlugin{}, fmt.Sprintf(`{"Header": "x-api-key", "Allowed": ["alpha"], "Mode": %q}`, tt.mode))
			svc.Timeout = 50 * time.Millisecond
			got, err := svc.Call(tt.req)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Call = %+v, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

// recorder is a testing.TB that keeps what the assertions report.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAssertions(t *testing.T) {
	svc := plugintest.Start(t, keyPlugin{}, goodConfig)
	allowed := plugintest.NewRequest("GET", "/").Header("X-Api-Key", "alpha").Build()
	denied := plugintest.NewRequest("GET", "/").Build()
	body := "keyplugin: x-api-key missing or not allowed"
	tests := []struct {
		name   string
		req    *pluginapi.AuthorizationRequest
		assert func(*plugintest.Result)
		want   []string
	}{
		{name: "allow passes", req: allowed, assert: func(r *plugintest.Result) {
			r.Allowed().RequestHeader("X-Key-Checked", "true").RequestHeader("x-trace", "ALPHA").NoHeader("x-other")
		}},
		{name: "deny passes", req: denied, assert: func(r *plugintest.Result) {
			r.Denied(401).Body(body).ResponseHeader("www-authenticate", "Key").ResponseHeader("set-cookie", "a=1,b=2").NoHeader("x-key-checked")
		}},
		{name: "want allow, got deny", req: denied, assert: func(r *plugintest.Result) { r.Allowed() }, want: []string{"got deny 401, want allow"}},
		{name: "want deny, got allow", req: allowed, assert: func(r *plugintest.Result) { r.Denied(0) }, want: []string{"decision: got allow, want deny"}},
		{name: "wrong status and body", req: denied, assert: func(r *plugintest.Result) { r.Denied(403).Body("no") }, want: []string{
			"status: got 401, want 403", fmt.Sprintf("body: got %q, want %q", body, "no"),
		}},
		{name: "headers", req: allowed, assert: func(r *plugintest.Result) {
			r.RequestHeader("x-key-checked", "false").RequestHeader("x-missing", "v").ResponseHeader("x-r", "1").NoHeader("X-Trace")
		}, want: []string{
			`request header x-key-checked: got "true", want "false"`, `request header x-missing: absent, want "v"`,
			`response header x-r: absent, want "1"`, `request header x-trace: got "ALPHA", want it absent`,
		}},
		{name: "want a failure, got allow", req: allowed, assert: func(r *plugintest.Result) { r.Failed("panic") }, want: []string{`got allow, want a failure containing "panic"`}},
		{name: "matches", req: denied, assert: func(r *plugintest.Result) {
			r.Matches(plugintest.Want{Decision: plugintest.Allow, RequestHeaders: map[string]string{"x-key-checked": "true"}})
		}, want: []string{"decision: got deny 401, want allow", `request header x-key-checked: absent, want "true"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			tt.assert(svc.Authorize(rec, tt.req))
			if diff := cmp.Diff(tt.want, rec.errs); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailureAssertions(t *testing.T) {
	svc := plugintest.Start(t, keyPlugin{}, `{"Header": "x", "Mode": "panic"}`)
	rec := &recorder{TB: t}
	svc.Authorize(rec, plugintest.NewRequest("GET", "/").Build()).Failed("keyplugin: boom").Allowed().RequestHeader("x", "y")
	want := []string{"Authorize failed: panic: keyplugin: boom", "Authorize failed: panic: keyplugin: boom"}
	if diff := cmp.Diff(want, rec.errs); diff != "" {
		t.Errorf("reported (-want +got):\n%s", diff)
	}
	if !strings.Contains(plugintest.Got(nil, fmt.Errorf("x")), "error: x") {
		t.Error("Got of an error does not name it")
	}
}
