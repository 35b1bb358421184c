package server

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/server/chain"
)

// Outcomes of a Check, as the "outcome" label.
const (
	outcomeAllowed       = "allowed"
	outcomeDenied        = "denied"
	outcomeUnknownConfig = "unknown_config"
	outcomeNoConfigID    = "no_config_id"
	outcomeError         = "error"
	outcomePanic         = "panic"
	outcomeDeadline      = "deadline"
)

// Metrics are the extauth server's Prometheus metrics.
type Metrics struct {
	checks *prometheus.CounterVec
	// decided holds a *decidedCounters per config_id that served a Check.
	decided sync.Map
	status  statusCollector
	source  *prometheus.GaugeVec
}

// NewMetrics registers the extauth metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_extauth_checks_total",
			Help: "Checks answered, by config_id and outcome (allowed, denied, unknown_config, no_config_id, error, panic, deadline).",
		}, []string{"config_id", "outcome"}),
		source: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gatehouse_extauth_config_source_problem",
			Help: "1 while the config source (--config) cannot be applied (a document that does not parse, the folder gone), so no AuthConfig changes; 0 when it applies.",
		}, []string{"path"}),
	}
	abandoned := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_extauth_abandoned_step_calls",
		Help: "Step calls, over every step, that passed their deadline and have not returned yet.",
	}, func() float64 { return float64(chain.Abandoned()) })
	versions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_extauth_plugin_versions_loaded",
		Help: "Plugin contents (distinct sha256) this process opened; Go cannot unload a plugin, so each stays in memory (a few MB) until the process ends.",
	}, func() float64 { return float64(loader.LoadedVersions()) })
	reg.MustRegister(m.checks, &m.status, m.source, abandoned, versions, stuckCollector{})
	return m
}

var stuckDesc = prometheus.NewDesc("gatehouse_extauth_stuck_step_calls",
	"Calls of a step that passed their deadline and have not returned yet, by config_id, step and plugin file; a step with "+
		strconv.Itoa(chain.MaxCallsPerStep)+" calls running denies at once, and only it.",
	[]string{"config_id", "step", "plugin"}, nil)

// stuckCollector reports the steps with stuck calls, including steps of configs that
// changed since, until their calls return.
type stuckCollector struct{}

func (stuckCollector) Describe(ch chan<- *prometheus.Desc) { ch <- stuckDesc }

func (stuckCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range chain.Stuck() {
		ch <- prometheus.MustNewConstMetric(stuckDesc, prometheus.GaugeValue, float64(s.Calls), s.ConfigID, s.Step, s.Plugin)
	}
}

func (m *Metrics) observe(configID, outcome string) {
	if m == nil {
		return
	}
	if outcome != outcomeAllowed && outcome != outcomeDenied {
		m.checks.WithLabelValues(configID, outcome).Inc()
		return
	}
	// The two outcomes of nearly every Check skip the label hashing and lookup of
	// WithLabelValues: their counters are resolved once per config_id.
	c, ok := m.decided.Load(configID)
	if !ok {
		c, _ = m.decided.LoadOrStore(configID, &decidedCounters{
			allowed: m.checks.WithLabelValues(configID, outcomeAllowed),
			denied:  m.checks.WithLabelValues(configID, outcomeDenied),
		})
	}
	if dc := c.(*decidedCounters); outcome == outcomeAllowed {
		dc.allowed.Inc()
	} else {
		dc.denied.Inc()
	}
}

// decidedCounters are the allowed and denied counters of one config_id.
type decidedCounters struct{ allowed, denied prometheus.Counter }

// SetStatus replaces the AuthConfig status gauges.
func (m *Metrics) SetStatus(statuses []Status) {
	if m == nil {
		return
	}
	m.status.set(statuses)
}

// SetSource sets the config source gauge of path: 1 when err is set, 0 when nil.
func (m *Metrics) SetSource(path string, err error) {
	if m == nil {
		return
	}
	v := 0.0
	if err != nil {
		v = 1
	}
	m.source.WithLabelValues(path).Set(v)
}
