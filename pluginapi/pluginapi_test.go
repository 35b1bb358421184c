package pluginapi_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/pluginapi"
)

func TestHeaderIsCaseInsensitive(t *testing.T) {
	req := &pluginapi.AuthorizationRequest{Headers: map[string]string{"x-required": "alpha", "content-type": "text/plain"}}
	tests := []struct {
		name   string
		lookup string
		want   string
		wantOK bool
	}{
		{name: "lower case", lookup: "x-required", want: "alpha", wantOK: true},
		{name: "upper case", lookup: "X-REQUIRED", want: "alpha", wantOK: true},
		{name: "canonical", lookup: "Content-Type", want: "text/plain", wantOK: true},
		{name: "mixed in the middle", lookup: "x-ReQuired", want: "alpha", wantOK: true},
		{name: "absent", lookup: "X-Missing", want: "", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := req.Header(tt.lookup)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Header(%q) = %q, %v; want %q, %v", tt.lookup, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHeaderOnNilMap(t *testing.T) {
	req := &pluginapi.AuthorizationRequest{}
	if v, ok := req.Header("x"); ok || v != "" {
		t.Errorf("Header on a request without headers = %q, %v; want \"\", false", v, ok)
	}
}

func TestResponseHelpers(t *testing.T) {
	tests := []struct {
		name       string
		got        *pluginapi.AuthorizationResponse
		want       *pluginapi.AuthorizationResponse
		wantStatus int
	}{
		{
			name:       "allow",
			got:        pluginapi.Allow(),
			want:       &pluginapi.AuthorizationResponse{Allowed: true},
			wantStatus: http.StatusForbidden,
		},
		{
			name:       "deny with status and body",
			got:        pluginapi.Deny(http.StatusTeapot, "no tea"),
			want:       &pluginapi.AuthorizationResponse{Status: http.StatusTeapot, Body: "no tea"},
			wantStatus: http.StatusTeapot,
		},
		{
			name:       "forbidden",
			got:        pluginapi.Forbidden(),
			want:       &pluginapi.AuthorizationResponse{Status: http.StatusForbidden},
			wantStatus: http.StatusForbidden,
		},
		{
			name:       "unauthenticated",
			got:        pluginapi.Unauthenticated(),
			want:       &pluginapi.AuthorizationResponse{Status: http.StatusUnauthorized},
			wantStatus: http.StatusUnauthorized,
		},
		{
			name:       "zero status defaults to 403",
			got:        &pluginapi.AuthorizationResponse{},
			want:       &pluginapi.AuthorizationResponse{},
			wantStatus: http.StatusForbidden,
		},
		{
			name: "header helpers lower-case names and chain",
			got: pluginapi.Allow().
				WithRequestHeader("X-User", "alice").
				WithRequestHeader("x-user", "bob").
				WithAppendedRequestHeader("X-Trace", "a").
				WithoutRequestHeader("Authorization").
				WithoutRequestHeader("Cookie").
				WithResponseHeader("Cache-Control", "no-store"),
			want: &pluginapi.AuthorizationResponse{
				Allowed:              true,
				RequestHeaders:       map[string]string{"x-user": "bob"},
				AppendRequestHeaders: map[string]string{"x-trace": "a"},
				RemoveRequestHeaders: []string{"authorization", "cookie"},
				ResponseHeaders:      map[string]string{"cache-control": "no-store"},
			},
			wantStatus: http.StatusForbidden,
		},
		{
			name: "repeated response headers keep every line",
			got: pluginapi.Deny(http.StatusFound, "").
				WithResponseHeader("Location", "/login").
				WithAddedResponseHeader("Set-Cookie", "a=1").
				WithAddedResponseHeader("set-cookie", "b=2"),
			want: &pluginapi.AuthorizationResponse{
				Status:               http.StatusFound,
				ResponseHeaders:      map[string]string{"location": "/login"},
				ResponseHeaderValues: map[string][]string{"set-cookie": {"a=1", "b=2"}},
			},
			wantStatus: http.StatusFound,
		},
		{
			name: "deny keeps response headers",
			got:  pluginapi.Unauthenticated().WithResponseHeader("WWW-Authenticate", `Bearer realm="x"`),
			want: &pluginapi.AuthorizationResponse{
				Status:          http.StatusUnauthorized,
				ResponseHeaders: map[string]string{"www-authenticate": `Bearer realm="x"`},
			},
			wantStatus: http.StatusUnauthorized,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if got := tt.got.StatusCode(); got != tt.wantStatus {
				t.Errorf("StatusCode() = %d, want %d", got, tt.wantStatus)
			}
		})
	}
}
