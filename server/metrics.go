package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/server/chain"
)

// Outcomes of a Check, as the "outcome" label.
const (
	outcomeAllowed       = "allowed"
	outcomeDenied        = "denied"
	outcomeUnknownConfig = "unknown_config"
	outcomeError         = "error"
	outcomePanic         = "panic"
	outcomeDeadline      = "deadline"
)

// Metrics are the extauth server's Prometheus metrics.
type Metrics struct {
	checks *prometheus.CounterVec
	status *prometheus.GaugeVec
}

// NewMetrics registers the extauth metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_extauth_checks_total",
			Help: "Checks answered, by config_id and outcome (allowed, denied, unknown_config, error, panic, deadline).",
		}, []string{"config_id", "outcome"}),
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gatehouse_extauth_auth_config_status",
			Help: "1 for the current state of each AuthConfig (Accepted or Rejected); serving_previous tells whether a last good version still serves.",
		}, []string{"config_id", "state", "serving_previous"}),
	}
	abandoned := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_extauth_abandoned_step_calls",
		Help: "Step calls that passed their deadline and have not returned yet (bounded by the server).",
	}, func() float64 { return float64(chain.Abandoned()) })
	reg.MustRegister(m.checks, m.status, abandoned)
	return m
}

func (m *Metrics) observe(configID, outcome string) {
	if m != nil {
		m.checks.WithLabelValues(configID, outcome).Inc()
	}
}

// SetStatus replaces the AuthConfig status gauges.
func (m *Metrics) SetStatus(statuses []Status) {
	if m == nil {
		return
	}
	m.status.Reset()
	for _, s := range statuses {
		prev := "false"
		if s.ServingPrevious {
			prev = "true"
		}
		m.status.WithLabelValues(s.ID, s.State, prev).Set(1)
	}
}
