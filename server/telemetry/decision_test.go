package telemetry_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/server/telemetry"
)

// lines is an io.Writer that keeps what is written, safe for concurrent Checks.
type lines struct{ syncbuf.Buffer }

func (l *lines) entries(t *testing.T) []telemetry.Entry {
	t.Helper()
	var out []telemetry.Entry
	sc := bufio.NewScanner(bytes.NewReader(l.Bytes()))
	for sc.Scan() {
		var e telemetry.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decision line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func hashed(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// TestDecisionRecords: one JSON line per decided Check, allow and deny, with the
// deciding step, the query stripped, the trace id Envoy sent, and header values only
// for allow-listed headers, hashed unless raw values are asked for.
func TestDecisionRecords(t *testing.T) {
	const token = "Bearer secret-token-value"
	tp := "00-" + traceID + "-" + parentSpan + "-00"
	for _, tc := range []struct {
		name    string
		allow   []string
		raw     bool
		id      string
		headers map[string]string
		want    telemetry.Entry
	}{
		{name: "allow", id: configID, headers: map[string]string{"x-required": "alpha"},
			want: telemetry.Entry{Decision: "allow", Outcome: "allowed", Status: 200,
				Steps: []telemetry.StepTime{{Step: "step/required_header"}, {Step: "step/stamp"}}}},
		{name: "deny", id: configID, headers: map[string]string{"x-required": "nope"},
			want: telemetry.Entry{Decision: "deny", Outcome: "denied", Step: "step/required_header", Status: 403,
				Reason: "a step denied the request", Steps: []telemetry.StepTime{{Step: "step/required_header"}}}},
		{name: "deny, allow-listed header hashed", id: configID, allow: []string{"X-User"},
			headers: map[string]string{"x-required": "nope", "x-user": "alice"},
			want: telemetry.Entry{Decision: "deny", Outcome: "denied", Step: "step/required_header", Status: 403,
				Reason: "a step denied the request", Steps: []telemetry.StepTime{{Step: "step/required_header"}},
				Headers: map[string]string{"x-user": hashed("alice")}}},
		{name: "allow, allow-listed header raw", id: configID, allow: []string{"x-user"}, raw: true,
			headers: map[string]string{"x-required": "alpha", "x-user": "alice"},
			want: telemetry.Entry{Decision: "allow", Outcome: "allowed", Status: 200,
				Steps:   []telemetry.StepTime{{Step: "step/required_header"}, {Step: "step/stamp"}},
				Headers: map[string]string{"x-user": "alice"}}},
		{name: "allow-listed header absent", id: configID, allow: []string{"x-user"}, headers: map[string]string{"x-required": "alpha"},
			want: telemetry.Entry{Decision: "allow", Outcome: "allowed", Status: 200,
				Steps: []telemetry.StepTime{{Step: "step/required_header"}, {Step: "step/stamp"}}}},
		{name: "unknown config_id", id: "team.gone", headers: map[string]string{"x-required": "alpha"},
			want: telemetry.Entry{Decision: "deny", Outcome: "unknown_config", Status: 403,
				Reason: "no AuthConfig with this config_id is serving"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &lines{}
			reg := prometheus.NewRegistry()
			log := telemetry.NewDecisionLog(telemetry.DecisionOptions{Out: out, Sample: 1, Headers: tc.allow, RawHeaders: tc.raw, Registerer: reg})
			c := serve(t, telemetry.Options{Tracer: noop.NewTracerProvider().Tracer("test"), Registerer: reg, Decisions: log})
			headers := map[string]string{"authorization": token, "cookie": "session=secret-cookie", "traceparent": tp}
			for k, v := range tc.headers {
				headers[k] = v
			}
			check(t, c, checkRequest(tc.id, "/items?page=2&token=abc", headers))
			got := out.entries(t)
			if len(got) != 1 {
				t.Fatalf("%d records, want 1", len(got))
			}
			want := tc.want
			want.RequestID, want.TraceID, want.ConfigID, want.Method, want.Host, want.Path = "req-1", traceID, tc.id, "GET", "app.example.com", "/items"
			ignore := cmp.Options{cmpopts.IgnoreFields(telemetry.Entry{}, "Time", "DurationMS"), cmpopts.IgnoreFields(telemetry.StepTime{}, "DurationMS")}
			if diff := cmp.Diff(want, got[0], ignore); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			line := out.String()
			for _, secret := range []string{"secret-token-value", "secret-cookie", "token=abc", "page=2"} {
				if strings.Contains(line, secret) {
					t.Errorf("record carries %q: %s", secret, line)
				}
			}
		})
	}
}

// TestDecisionFloodIsRateLimited: past the rate limit records are not written, and
// each one dropped is counted.
func TestDecisionFloodIsRateLimited(t *testing.T) {
	out := &lines{}
	reg := prometheus.NewRegistry()
	log := telemetry.NewDecisionLog(telemetry.DecisionOptions{Out: out, Sample: 1, PerSecond: 5, Registerer: reg})
	c := serve(t, telemetry.Options{Tracer: noop.NewTracerProvider().Tracer("test"), Registerer: reg, Decisions: log})
	const flood = 200
	for range flood {
		check(t, c, checkRequest(configID, "/", map[string]string{"x-required": "nope"}))
	}
	written := len(out.entries(t))
	dropped := value(t, reg, "gatehouse_extauth_decision_logs_dropped_total")
	if written+dropped != flood {
		t.Errorf("%d written + %d dropped != %d denials", written, dropped, flood)
	}
	// The burst is 5; a further record comes every 200 ms the flood lasts.
	if written < 5 || dropped == 0 || written > flood/2 {
		t.Errorf("%d of %d denials written, %d dropped: want the burst of 5 (and a few more) written, the rest dropped", written, flood, dropped)
	}
	if got := value(t, reg, "gatehouse_extauth_decision_logs_total"); got != written {
		t.Errorf("gatehouse_extauth_decision_logs_total = %d, want %d lines written", got, written)
	}
}

// TestDecisionSampling: the global share and a per-config_id override.
func TestDecisionSampling(t *testing.T) {
	out := &lines{}
	reg := prometheus.NewRegistry()
	log := telemetry.NewDecisionLog(telemetry.DecisionOptions{Out: out, Sample: 1,
		SampleByConfig: map[string]float64{"team.gone": 0}, Registerer: reg})
	c := serve(t, telemetry.Options{Tracer: noop.NewTracerProvider().Tracer("test"), Registerer: reg, Decisions: log})
	for range 10 {
		check(t, c, checkRequest(configID, "/", nil))
		check(t, c, checkRequest("team.gone", "/", nil))
	}
	ids := map[string]int{}
	for _, e := range out.entries(t) {
		ids[e.ConfigID]++
	}
	if diff := cmp.Diff(map[string]int{configID: 10}, ids); diff != "" {
		t.Errorf("records by config_id (-want +got):\n%s", diff)
	}
}

// value is the value of the unlabelled counter name in g.
func value(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return int(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	t.Fatalf("no %s in the registry", name)
	return 0
}
