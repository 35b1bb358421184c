package operator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestControlPlaneSnapshots: every /snapshots/* view of a running control plane answers
// the envelope with 200, and no secret value appears anywhere in any of them.
func TestControlPlaneSnapshots(t *testing.T) {
	dir, secrets := healthyDir(t)
	cp := startControlPlane(t, dir)
	for _, path := range []string{"/snapshots/input", "/snapshots/edge", "/snapshots/proxies", "/snapshots/xds", "/snapshots/health", "/statuses", "/snapshots/xds?role=extauth"} {
		t.Run(path, func(t *testing.T) {
			code, body, err := httpDo(http.MethodGet, "http://"+cp.admin+path, "")
			if err != nil {
				t.Fatal(err)
			}
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d: %s", path, code, body)
			}
			assertNoSecret(t, path, body, secrets)
			if !strings.HasPrefix(path, "/snapshots/") {
				return
			}
			var env struct {
				Status struct {
					Version uint64         `json:"version"`
					Counts  map[string]int `json:"counts"`
				} `json:"status"`
				Data  json.RawMessage `json:"data"`
				Error *string         `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil {
				t.Fatal(err)
			}
			if env.Status.Version == 0 || len(env.Status.Counts) == 0 || len(env.Data) == 0 || env.Error == nil || *env.Error != "" {
				t.Errorf("GET %s: envelope %s, want a version, counts, data and an empty error", path, body)
			}
		})
	}
	_, input, _ := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/input", "")
	for _, want := range []string{`"client-secret": "<redacted>"`, `"tls.key": "<redacted>"`, `"token": "<redacted>"`} {
		if !strings.Contains(input, want) {
			t.Errorf("/snapshots/input does not show %s", want)
		}
	}
	_, xdsView, _ := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/xds", "")
	if !strings.Contains(xdsView, `"clientSecret": "<redacted>"`) {
		t.Errorf("/snapshots/xds does not show the OIDC client secret as <redacted>")
	}
	code, body, _ := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/xds?role=nobody~none", "")
	if code != http.StatusNotFound || !strings.Contains(body, `"error": "role not served`) {
		t.Errorf("GET /snapshots/xds?role=nobody~none = %d %s, want 404 with the error", code, body)
	}
	code, body, _ = httpDo(http.MethodGet, "http://"+cp.admin+"/debug/pprof/", "")
	if code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ = %d, want the profile index", code)
	}
}

// TestControlPlaneMetrics: /metrics carries the stage metrics beside the xDS server's.
func TestControlPlaneMetrics(t *testing.T) {
	dir, _ := healthyDir(t)
	cp := startControlPlane(t, dir)
	// The stage metrics are recorded just after the snapshot the harness waited for is
	// stored, so poll for them.
	testbin.Eventually(t, settle, func() error {
		_, body, err := httpDo(http.MethodGet, "http://"+cp.admin+"/metrics", "")
		if err != nil {
			return err
		}
		for _, want := range []string{
			"gatehouse_controlplane_translate_seconds_count 1",
			"gatehouse_controlplane_snapshot_version 1",
			`gatehouse_controlplane_resources{kind="Upstream",state="Accepted"} 2`,
			`gatehouse_controlplane_resources{kind="Secret",state="Accepted"} 3`,
			"gatehouse_controlplane_source_problems 0",
			"gatehouse_xds_publish_seconds_count",
		} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("/metrics lacks %q", want)
			}
		}
		return nil
	})
}

// TestControlPlaneLogging: GET and PUT /logging, their errors, and a PUT taking effect
// on the next log line.
func TestControlPlaneLogging(t *testing.T) {
	dir, _ := healthyDir(t)
	cp := startControlPlane(t, dir)
	url := "http://" + cp.admin + "/logging"
	tests := []struct {
		name, method, body string
		code               int
		want               string
	}{
		{"get", http.MethodGet, "", 200, `{"level":"info"}`},
		{"put debug", http.MethodPut, `{"level":"debug"}`, 200, `{"level":"debug"}`},
		{"get after put", http.MethodGet, "", 200, `{"level":"debug"}`},
		{"bad level", http.MethodPut, `{"level":"loud"}`, 400, `{"error":"log level \"loud\": use one of debug, info, warn, error, panic, fatal"}`},
		{"bad body", http.MethodPut, `level=info`, 400, `{"error":"body must be JSON like {\"level\": \"debug\"}"}`},
		{"other method", http.MethodPost, `{"level":"info"}`, 405, `{"error":"use GET, or PUT {\"level\": …}"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := httpDo(tt.method, url, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !jsonEqual(body, tt.want) {
				t.Errorf("%s /logging %s = %d %s, want %d %s", tt.method, tt.body, code, body, tt.code, tt.want)
			}
		})
	}

	// At debug, an edit logs what was published at debug level; back at info, it does not.
	mark := len(cp.proc.Output())
	writeFile(t, dir, "upstreams.yaml", strings.Replace(upstreamsYAML, "8090}, {addr: 127.0.0.2", "8091}, {addr: 127.0.0.2", 1))
	testbin.Eventually(t, settle, func() error {
		if !strings.Contains(cp.proc.Output()[mark:], `"level":"debug"`) {
			return fmt.Errorf("no debug line after the edit at level debug")
		}
		return nil
	})
	if code, body, _ := httpDo(http.MethodPut, url, `{"level":"info"}`); code != 200 {
		t.Fatalf("PUT info = %d %s", code, body)
	}
	mark = len(cp.proc.Output())
	writeFile(t, dir, "upstreams.yaml", strings.Replace(upstreamsYAML, "8090}, {addr: 127.0.0.2", "8092}, {addr: 127.0.0.2", 1))
	// The version moves on once the edit was applied; no debug line may precede it.
	testbin.Eventually(t, settle, func() error {
		_, body, err := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/proxies", "")
		if err != nil || !strings.Contains(body, "8092") {
			return fmt.Errorf("edit not applied yet: %v", err)
		}
		return nil
	})
	if out := cp.proc.Output()[mark:]; strings.Contains(out, `"level":"debug"`) {
		t.Errorf("a debug line was logged at level info:\n%s", out)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

// TestControlPlaneZpages: /zpages shows the spans of the control plane's runs and
// publishes, and samples of them.
func TestControlPlaneZpages(t *testing.T) {
	dir, _ := healthyDir(t)
	cp := startControlPlane(t, dir)
	// The first run's spans end after its stages answer (which startControlPlane
	// waits for): a read in between found controlplane.translate not yet recorded.
	testbin.Eventually(t, settle, func() error {
		code, body, err := httpDo(http.MethodGet, "http://"+cp.admin+"/zpages", "")
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("GET /zpages = %d %v", code, err)
		}
		for _, want := range []string{"controlplane.apply", "controlplane.translate", "xds.publish"} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("/zpages lacks the span %s", want)
			}
		}
		return nil
	})
	// Latency samples (ztype=1) of one span name, in whichever bucket they fell. zpages
	// keeps at most one sample a second in each bucket, and a run publishes extauth's
	// role first, then the proxy's: when both fall in the same bucket only extauth's is
	// kept (this test failed so in a CI run on 2026-11-27), so either role will do.
	found := false
	for bucket := range 9 {
		code, body, _ := httpDo(http.MethodGet, fmt.Sprintf("http://%s/zpages?zspanname=xds.publish&ztype=1&zlatencybucket=%d", cp.admin, bucket), "")
		if code != http.StatusOK {
			t.Fatalf("GET /zpages samples = %d", code)
		}
		found = found || strings.Contains(body, "role=gatehouse-system~gateway-proxy") || strings.Contains(body, "role=extauth")
	}
	if !found {
		t.Errorf("no latency sample of xds.publish shows its role attribute")
	}
}
