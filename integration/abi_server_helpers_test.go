package integration_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/server"
)

// srvProc is a running `gatehouse extauth` with its admin server, and a client for it.
type srvProc struct {
	bin, dir, admin string
	config          string // the --config file
	proc            *testbin.Process
	client          authv3.AuthorizationClient
}

// startSrv runs `gatehouse extauth` on config (AuthConfig YAML) with the plugin
// directory dir. Loading the config comes before serving, and a plugin whose init hangs
// holds it for the trial timeout, so the wait for the admin port is generous.
func startSrv(t *testing.T, bin, dir, config string) *srvProc {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "authconfigs.yaml")
	abiWrite(t, cfg, config)
	addr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := testbin.Start(t, nil, bin, "extauth", "--config", cfg, "--plugin-dir", dir, "--listen", addr, "--admin-listen", admin)
	testbin.WaitTCP(t, p, admin, time.Minute)
	// extauth serves while its first load builds; the statuses are complete once it
	// says it is ready (the first complete config is built).
	testbin.Eventually(t, 2*time.Minute, func() error {
		resp, err := http.Get("http://" + admin + "/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/ready: %s", resp.Status)
		}
		return nil
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &srvProc{bin: bin, dir: dir, admin: admin, config: cfg, proc: p, client: authv3.NewAuthorizationClient(conn)}
}

// srvAuthConfig is one AuthConfig document with a single plugin step; config is the
// step's config as flow-style YAML.
func srvAuthConfig(name, plugin, file, symbol, config string) string {
	return fmt.Sprintf(`---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s, namespace: default}
spec:
  configs:
    - pluginAuth: {name: %s, pluginFileName: %s, exportedSymbolName: %s, config: %s}
`, name, plugin, file, symbol, config)
}

// srvSettings raises the Check deadline above the 200ms default: the swap tests count
// every failed Check, and 16 clients, a trial load and the server share two cores.
const srvSettings = `---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 10s}
`

// check sends a CheckRequest for config_id id, as Envoy sends it.
func (s *srvProc) check(ctx context.Context, id string, headers map[string]string) (*authv3.CheckResponse, error) {
	h := map[string]string{":method": "GET", ":path": "/", ":authority": "example.test"}
	for k, v := range headers {
		h[k] = v
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.client.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "example.test", Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": id},
	}})
}

// srvVerdict is the part of a CheckResponse the tests compare: the gRPC code, the HTTP
// status of a deny, and the headers of an allow.
type srvVerdict struct {
	RPC     code.Code
	HTTP    int
	Headers map[string]string
}

func (v srvVerdict) String() string {
	if v.RPC == code.Code_OK {
		return fmt.Sprintf("allowed %v", v.Headers)
	}
	return fmt.Sprintf("%s %d", v.RPC, v.HTTP)
}

var (
	srvForbidden = srvVerdict{RPC: code.Code_PERMISSION_DENIED, HTTP: 403}
	srvFailed    = srvVerdict{RPC: code.Code_UNAVAILABLE, HTTP: 500}
	srvMatched   = srvVerdict{RPC: code.Code_OK, Headers: map[string]string{"matched-allowed-headers": "true"}}
)

// verdict checks id with headers and fails the test if the Check itself fails.
func (s *srvProc) verdict(t *testing.T, id string, headers map[string]string) srvVerdict {
	t.Helper()
	r, err := s.check(context.Background(), id, headers)
	if err != nil {
		t.Fatalf("Check(%s): %v", id, err)
	}
	return srvVerdictOf(r)
}

func srvVerdictOf(r *authv3.CheckResponse) srvVerdict {
	v := srvVerdict{RPC: code.Code(r.GetStatus().GetCode())}
	if d := r.GetDeniedResponse(); d != nil {
		v.HTTP = int(d.GetStatus().GetCode())
	}
	for _, h := range r.GetOkResponse().GetHeaders() {
		if v.Headers == nil {
			v.Headers = map[string]string{}
		}
		v.Headers[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
	}
	return v
}

// statuses is the server's /auth-configs, by config_id.
func (s *srvProc) statuses(t *testing.T) map[string]server.Status {
	t.Helper()
	resp, err := http.Get("http://" + s.admin + "/auth-configs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []server.Status
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("/auth-configs: %v", err)
	}
	out := make(map[string]server.Status, len(list))
	for _, st := range list {
		out[st.ID] = st
	}
	return out
}

// metric is the value of the gauge name whose labels include labels, or -1 when the
// server exports no such series.
func (s *srvProc) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	for _, m := range families[name].GetMetric() {
		if srvHasLabels(m, labels) {
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

func srvHasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// srvLog is one JSON log line of the server.
type srvLog map[string]any

func (l srvLog) str(key string) string { s, _ := l[key].(string); return s }

// logs are the server's JSON log lines at level whose message is msg.
func (s *srvProc) logs(level, msg string) []srvLog {
	var out []srvLog
	sc := bufio.NewScanner(strings.NewReader(s.proc.Output()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l srvLog
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.str("level") == level && l.str("message") == msg {
			out = append(out, l)
		}
	}
	return out
}

// logsOnce are s's log lines of level with message msg once there are at least n: the
// process writes a line after it sets the status the admin shows, and its output is
// read on a goroutine of its own, so a status seen does not mean its line was read.
func (s *srvProc) logsOnce(t *testing.T, level, msg string, n int) []srvLog {
	t.Helper()
	var out []srvLog
	testbin.Eventually(t, time.Minute, func() error {
		if out = s.logs(level, msg); len(out) < n {
			return fmt.Errorf("%d %s lines %q, want at least %d", len(out), level, msg, n)
		}
		return nil
	})
	return out
}

// status runs `gatehouse extauth status` against the server.
func (s *srvProc) status(t *testing.T) abiResult {
	t.Helper()
	return abiRun(t, "", nil, s.bin, "extauth", "status", "--admin", s.admin)
}

// srvInstall copies src into dir as name (through a temporary name and a rename, as the
// plugin image's copier does) and returns the time of the rename.
func srvInstall(t *testing.T, src, dir, name string) time.Time {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}
