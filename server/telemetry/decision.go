package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"gatehouse.dev/gatehouse/server"
)

// DecisionOptions shape a DecisionLog.
type DecisionOptions struct {
	// Out takes the records as JSON lines, one Write per record.
	Out io.Writer
	// Emit, when set, takes the records instead of Out (as OTLP logs, say).
	Emit func(ctx context.Context, e *Entry)
	// Sample is the share of decided Checks recorded (0 to 1).
	Sample float64
	// SampleByConfig overrides Sample, and the configs' own shares, for the
	// config_ids it names.
	SampleByConfig map[string]float64
	// PerSecond caps the records written per second, in bursts of as many; the Checks
	// past it are counted as dropped. 0: no cap.
	PerSecond float64
	// Headers names the request headers (any case) whose values a record carries. No
	// other header value, token or cookie is ever written.
	Headers []string
	// RawHeaders writes those values as they are; by default each is written as
	// "sha256:" and the first 16 bytes of its SHA-256, in hex, which tells equal values
	// apart from different ones without showing them.
	RawHeaders bool
	// Registerer takes the written and dropped counters.
	Registerer prometheus.Registerer
}

// DecisionLog writes a record of the decided Checks it samples.
type DecisionLog struct {
	o       DecisionOptions
	headers []string // lower case
	limit   *rate.Limiter
	mu      sync.Mutex // orders writes to o.Out
	written prometheus.Counter
	dropped prometheus.Counter
	// configs holds the share of each serving config that sets its own
	// (decision_log_sample_ratio), as a *configShare by config_id.
	configs sync.Map
}

// NewDecisionLog returns a DecisionLog.
func NewDecisionLog(o DecisionOptions) *DecisionLog {
	l := &DecisionLog{o: o,
		written: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_extauth_decision_logs_total",
			Help: "Decision records written."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_extauth_decision_logs_dropped_total",
			Help: "Decision records not written because more were due than the rate limit allows (--decision-log-rate)."}),
	}
	for _, h := range o.Headers {
		l.headers = append(l.headers, strings.ToLower(h))
	}
	if o.PerSecond > 0 {
		l.limit = rate.NewLimiter(rate.Limit(o.PerSecond), max(1, int(o.PerSecond)))
	}
	o.Registerer.MustRegister(l.written, l.dropped)
	return l
}

// Entry is one decision record.
type Entry struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id,omitempty"`
	// TraceID is the trace the Check belongs to (Envoy's, when it sent one).
	TraceID  string `json:"trace_id,omitempty"`
	ConfigID string `json:"config_id"`
	Method   string `json:"method,omitempty"`
	Host     string `json:"host"`
	// Path is the request path without its query.
	Path string `json:"path"`
	// Decision is allow or deny.
	Decision string `json:"decision"`
	// Outcome is the checks_total outcome (allowed, denied, error, ...).
	Outcome string `json:"outcome"`
	// Step is the step that denied or failed.
	Step       string  `json:"step,omitempty"`
	Status     int     `json:"status"`
	Reason     string  `json:"reason,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// Steps are the steps that ran, in order, with the time each took.
	Steps   []StepTime        `json:"steps,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// StepTime is the time one step took.
type StepTime struct {
	Step       string  `json:"step"`
	DurationMS float64 `json:"duration_ms"`
}

// recordKey is the context key of a sampled Check's record.
type recordKey struct{}

// record is what a sampled Check gathers before it is written. Steps report from the
// chain's goroutine, which can still be reporting when the Check answers at its
// deadline: mu orders the two.
type record struct {
	start time.Time
	mu    sync.Mutex
	steps []StepTime
}

func (r *record) step(name string, took time.Duration) {
	r.mu.Lock()
	r.steps = append(r.steps, StepTime{Step: name, DurationMS: ms(took)})
	r.mu.Unlock()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// share returns the share of config_id id's Checks recorded: SampleByConfig's, else
// the config's own, else Sample.
func (l *DecisionLog) share(id string) float64 {
	if r, ok := l.o.SampleByConfig[id]; ok {
		return r
	}
	if v, ok := l.configs.Load(id); ok {
		if c := v.(*configShare); c.ctx.Err() == nil {
			return c.ratio
		}
	}
	return l.o.Sample
}

// configShare is a config's own share, valid while the context it was built with
// lives.
type configShare struct {
	ctx   context.Context
	ratio float64
}

// setConfigShare records the share a config built with ctx sets for its Checks (nil:
// none, Sample applies), until ctx ends (the config is replaced or removed) or a
// later build of the same config_id sets another.
func (l *DecisionLog) setConfigShare(ctx context.Context, id string, ratio *float64) {
	if ratio == nil {
		return // the share of the version it replaces ends with that version's ctx
	}
	c := &configShare{ctx: ctx, ratio: *ratio}
	l.configs.Store(id, c)
	context.AfterFunc(ctx, func() { l.configs.CompareAndDelete(id, c) })
}

// sample returns a record for a Check of config_id id when it is to be written, or nil.
func (l *DecisionLog) sample(id string) *record {
	ratio := l.share(id)
	if ratio <= 0 || ratio < 1 && rand.Float64() >= ratio {
		return nil
	}
	if l.limit != nil && !l.limit.Allow() {
		l.dropped.Inc()
		return nil
	}
	return &record{start: time.Now()}
}

// Reasons of the outcomes that are not a step's own.
var reasons = map[string]string{
	"denied":         "a step denied the request",
	"unknown_config": "no AuthConfig with this config_id is serving",
	"no_config_id":   "the route sent no config_id context extension",
}

// write writes the record of a decided Check.
func (l *DecisionLog) write(ctx context.Context, rec *record, d *server.Decision) {
	h := d.Request.GetAttributes().GetRequest().GetHttp()
	e := &Entry{Time: time.Now().UTC(), RequestID: h.GetId(), ConfigID: d.ConfigID, Method: h.GetMethod(), Host: h.GetHost(),
		Path: stripQuery(h.GetPath()), Decision: "deny", Outcome: d.Outcome, Step: d.Step, Status: d.Status,
		Reason: reasons[d.Outcome], DurationMS: ms(time.Since(rec.start))}
	if d.Allowed() {
		e.Decision = "allow"
	}
	if d.Err != nil {
		e.Reason = d.Err.Error()
	}
	carrier := headerCarrier{d.Request}
	if e.RequestID == "" {
		e.RequestID = carrier.Get("x-request-id")
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		sc = trace.SpanContextFromContext(propagator.Extract(context.Background(), traceCarrier(ctx, d.Request)))
	}
	if sc.IsValid() {
		e.TraceID = sc.TraceID().String()
	}
	rec.mu.Lock()
	e.Steps = rec.steps
	rec.mu.Unlock()
	for _, name := range l.headers {
		v := carrier.Get(name)
		if v == "" {
			continue
		}
		if !l.o.RawHeaders {
			sum := sha256.Sum256([]byte(v))
			v = "sha256:" + hex.EncodeToString(sum[:16])
		}
		if e.Headers == nil {
			e.Headers = map[string]string{}
		}
		e.Headers[name] = v
	}
	l.written.Inc()
	if l.o.Emit != nil {
		l.o.Emit(ctx, e)
		return
	}
	line, err := json.Marshal(e)
	if err != nil {
		return // an Entry always encodes
	}
	line = append(line, '\n')
	l.mu.Lock()
	_, _ = l.o.Out.Write(line)
	l.mu.Unlock()
}

func stripQuery(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i]
	}
	return p
}
