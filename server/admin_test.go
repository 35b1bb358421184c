package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

func TestAdminHandler(t *testing.T) {
	old := zerolog.GlobalLevel()
	t.Cleanup(func() { zerolog.SetGlobalLevel(old) })
	if err := logging.SetLevel("info"); err != nil {
		t.Fatal(err)
	}

	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		if cfg.GetConfigId() == "ns.bad" {
			return nil, errors.New(`spec.configs[0].pluginAuth (p): config: unknown field "X"`)
		}
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, testLogger(t))
	reg.Apply(cfgs(cfg("ns.good", 0), cfg("ns.bad", 0)), nil)
	promReg := prometheus.NewRegistry()
	server.NewMetrics(promReg)
	authz := server.NewAuthorizer(reg, testLogger(t), nil)
	server.NewGRPCServer(authz)
	srv := httptest.NewServer(server.AdminHandler(reg, promReg, authz))
	t.Cleanup(srv.Close)

	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantJSON   any    // compared with the decoded body when set
		wantBody   string // substring of the body when set
		wantLevel  string // logging.Level() afterwards
	}{
		{name: "get level", method: "GET", path: "/logging", wantStatus: 200, wantJSON: map[string]any{"level": "info"}, wantLevel: "info"},
		{name: "set level", method: "PUT", path: "/logging", body: `{"level": "debug"}`, wantStatus: 200, wantJSON: map[string]any{"level": "debug"}, wantLevel: "debug"},
		{name: "level after set", method: "GET", path: "/logging", wantStatus: 200, wantJSON: map[string]any{"level": "debug"}, wantLevel: "debug"},
		{
			name: "bad level", method: "PUT", path: "/logging", body: `{"level": "loud"}`, wantStatus: 400,
			wantJSON:  map[string]any{"error": `log level "loud": use one of debug, info, warn, error, panic, fatal`},
			wantLevel: "debug",
		},
		{
			name: "not JSON", method: "PUT", path: "/logging", body: `level=warn`, wantStatus: 400,
			wantJSON:  map[string]any{"error": `body must be JSON like {"level": "debug"}`},
			wantLevel: "debug",
		},
		{name: "body too large", method: "PUT", path: "/logging", body: `{"level": "warn", "pad": "` + strings.Repeat("x", 2048) + `"}`, wantStatus: 400, wantLevel: "debug"},
		{name: "other method", method: "DELETE", path: "/logging", wantStatus: 405, wantLevel: "debug"},
		{
			name: "auth configs", method: "GET", path: "/auth-configs", wantStatus: 200,
			wantJSON: []any{
				map[string]any{"id": "ns.bad", "state": "Rejected", "reason": `spec.configs[0].pluginAuth (p): config: unknown field "X"`},
				map[string]any{"id": "ns.good", "state": "Accepted"},
			},
			wantLevel: "debug",
		},
		{name: "metrics", method: "GET", path: "/metrics", wantStatus: 200, wantBody: "# TYPE gatehouse_extauth_abandoned_step_calls gauge", wantLevel: "debug"},
		{name: "metrics is read-only", method: "POST", path: "/metrics", wantStatus: 405, wantLevel: "debug"},
		{name: "pprof", method: "GET", path: "/debug/pprof/", wantStatus: 200, wantBody: "goroutine", wantLevel: "debug"},
		{name: "unknown path", method: "GET", path: "/nope", wantStatus: 404, wantLevel: "debug"},
		{name: "healthz while serving", method: "GET", path: "/healthz", wantStatus: 200, wantBody: "SERVING", wantLevel: "debug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantJSON != nil {
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				var got any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("body %q: %v", body, err)
				}
				if diff := cmp.Diff(tt.wantJSON, got); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(string(body), tt.wantBody) {
				t.Errorf("body does not contain %q:\n%s", tt.wantBody, body)
			}
			if got := logging.Level(); got != tt.wantLevel {
				t.Errorf("level = %q, want %q", got, tt.wantLevel)
			}
		})
	}
}

// TestAdminHealthzFollowsGRPCHealth: with mutual TLS on 8083 the kubelet's gRPC probe
// cannot connect, and probing /metrics instead never saw SetNotServing (the plugin
// version limit). /healthz answers 503 once health checking reports NOT_SERVING.
func TestAdminHealthzFollowsGRPCHealth(t *testing.T) {
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, testLogger(t))
	authz := server.NewAuthorizer(reg, testLogger(t), nil)
	server.NewGRPCServer(authz)
	srv := httptest.NewServer(server.AdminHandler(reg, prometheus.NewRegistry(), authz))
	t.Cleanup(srv.Close)
	get := func() int {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(); got != http.StatusOK {
		t.Fatalf("/healthz = %d before SetNotServing", got)
	}
	authz.SetNotServing()
	if got := get(); got != http.StatusServiceUnavailable {
		t.Fatalf("/healthz = %d after SetNotServing, want 503", got)
	}
}
