package xds

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the xDS server. Role labels are only roles that passed checkRole (a
// client naming anything else is counted as "unknown"), so a client cannot invent
// label values.
type metrics struct {
	pushes, pushedResources, acks, nacks *prometheus.CounterVec
	clients                              *prometheus.GaugeVec
	resources                            *prometheus.GaugeVec
	publishSeconds                       prometheus.Histogram
	publishFailures                      *prometheus.CounterVec
	refused                              *prometheus.CounterVec
	dropped                              *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	rt := []string{"role", "type"}
	m := &metrics{
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_pushes_total",
			Help: "xDS responses sent, by client role and type."}, rt),
		pushedResources: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_pushed_resources_total",
			Help: "Resources (and delta removals) sent in xDS responses, by client role and type."}, rt),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_acks_total",
			Help: "xDS responses a client accepted, by role and type."}, rt),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_nacks_total",
			Help: "xDS responses a client rejected, by role and type."}, rt),
		clients: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gatehouse_xds_clients",
			Help: "xDS streams open, by client role."}, []string{"role"}),
		resources: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gatehouse_xds_resources",
			Help: "Resources served, by role and type."}, rt),
		publishSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gatehouse_xds_publish_seconds",
			Help: "Time to validate, check and publish one role's state.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		publishFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_publish_failures_total",
			Help: "Publish calls refused (validation or consistency), by role."}, []string{"role"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_refused_streams_total",
			Help: "xDS streams refused with PermissionDenied, by reason: no_certificate, no_role (the certificate names no role served), claims_another_role (the node's metadata names another role than its certificate)."}, []string{"reason"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_xds_dropped_streams_total",
			Help: "xDS streams of stalled clients dropped, by role and reason: write_blocked (a response could not be written for the stall timeout: the client stopped reading), unanswered (a response was neither ACKed nor NACKed for the stall timeout)."}, []string{"role", "reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.pushes, m.pushedResources, m.acks, m.nacks, m.clients, m.resources, m.publishSeconds, m.publishFailures, m.refused, m.dropped)
	}
	return m
}

func metricRole(role string) string {
	if role == "" {
		return "unknown"
	}
	return role
}

func (m *metrics) published(r *role, took time.Duration) {
	m.publishSeconds.Observe(took.Seconds())
	for typ, served := range r.served {
		m.resources.WithLabelValues(r.name, typ).Set(float64(len(served)))
	}
}

func (m *metrics) publishFailed(role string) { m.publishFailures.WithLabelValues(role).Inc() }
