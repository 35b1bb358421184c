package server

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

var statusDesc = prometheus.NewDesc("gatehouse_extauth_auth_config_status",
	"1 for the current state of each AuthConfig (Accepted or Rejected); serving_previous tells whether a last good version still serves.",
	[]string{"config_id", "state", "serving_previous"}, nil)

// statusCollector is gatehouse_extauth_auth_config_status. Its samples are made when
// scraped, from the statuses last set, so nothing is kept per config between scrapes
// and a change costs nothing but the new list.
type statusCollector struct {
	last atomic.Pointer[[]configState]
}

// configState is what the status metric says of one config.
type configState struct {
	id, state       string
	servingPrevious bool
}

func (c *statusCollector) set(statuses []Status) {
	states := make([]configState, len(statuses))
	for i, s := range statuses {
		states[i] = configState{id: s.ID, state: s.State, servingPrevious: s.ServingPrevious}
	}
	c.last.Store(&states)
}

// Describe implements prometheus.Collector.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- statusDesc }

// Collect implements prometheus.Collector.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	states := c.last.Load()
	if states == nil {
		return
	}
	for _, s := range *states {
		prev := "false"
		if s.servingPrevious {
			prev = "true"
		}
		ch <- prometheus.MustNewConstMetric(statusDesc, prometheus.GaugeValue, 1, s.id, s.state, prev)
	}
}
