package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/server"
)

// metrics are the Observer's Prometheus metrics.
type metrics struct {
	steps   *prometheus.HistogramVec
	denials *prometheus.CounterVec
	checks  *prometheus.HistogramVec
	// checkSeries holds the checks histogram of each config_id that served a Check,
	// resolved once rather than by label lookup per Check.
	checkSeries sync.Map
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gatehouse_extauth_step_seconds",
			Help: "Time one step took to decide a request, by config_id and step; a series appears with its step's first call. " +
				"Traced Checks carry their trace_id as exemplar.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"config_id", "step"}),
		checks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gatehouse_extauth_check_seconds",
			Help: "Time extauth took to answer a Check, from its decoded request to its response, by config_id " +
				"(empty for Checks without one).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}, []string{"config_id"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_extauth_denials_total",
			Help: "Checks not allowed, by config_id, the step that decided (empty when no chain ran) and outcome " +
				"(denied, unknown_config, no_config_id, error, panic, deadline).",
		}, []string{"config_id", "step", "outcome"}),
	}
	reg.MustRegister(m.steps, m.denials, m.checks)
	return m
}

// denied counts a Check that was not allowed.
func (m *metrics) denied(d server.Decision) {
	m.denials.WithLabelValues(d.ConfigID, d.Step, d.Outcome).Inc()
}

// check adds a Check's latency to its config_id's series.
func (m *metrics) check(id string, took time.Duration) {
	h, ok := m.checkSeries.Load(id)
	if !ok {
		h, _ = m.checkSeries.LoadOrStore(id, m.checks.WithLabelValues(id))
	}
	h.(prometheus.Observer).Observe(took.Seconds())
}
