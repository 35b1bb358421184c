package xdsclient

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/server"
)

// AppliedVersions is gatehouse_extauth_xds_config_version: per config_id, the version
// (the control plane's content hash, as /snapshots/xds shows it) of the config that
// serves. A config extauth rejected keeps the version it had.
type AppliedVersions struct {
	desc *prometheus.Desc

	mu       sync.Mutex
	rejected map[string]bool
	versions map[string]string
}

// NewAppliedVersions registers the metric with reg. Wire Statuses into the Handle
// of ExtAuthHandler and Applied as Options.Applied.
func NewAppliedVersions(reg prometheus.Registerer) *AppliedVersions {
	a := &AppliedVersions{
		desc: prometheus.NewDesc("gatehouse_extauth_xds_config_version",
			"1 for the version of each ExtAuthConfig that serves, as the control plane versioned it.", []string{"config_id", "version"}, nil),
		rejected: map[string]bool{}, versions: map[string]string{},
	}
	reg.MustRegister(a)
	return a
}

// Statuses notes which configs were rejected; the handler calls it before Applied.
func (a *AppliedVersions) Statuses(st []server.Status) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rejected = make(map[string]bool, len(st))
	for _, s := range st {
		if s.State == server.StateRejected {
			a.rejected[s.ID] = true
		}
	}
}

// Applied records the versions the server sent, but for the rejected configs.
func (a *AppliedVersions) Applied(_ string, versions map[string]string, _ error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	next := make(map[string]string, len(versions))
	for id, v := range versions {
		switch {
		case !a.rejected[id]:
			next[id] = v
		case a.versions[id] != "":
			next[id] = a.versions[id]
		}
	}
	a.versions = next
}

// Describe implements prometheus.Collector.
func (a *AppliedVersions) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

// Collect implements prometheus.Collector.
func (a *AppliedVersions) Collect(ch chan<- prometheus.Metric) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, v := range a.versions {
		ch <- prometheus.MustNewConstMetric(a.desc, prometheus.GaugeValue, 1, id, v)
	}
}
