package xds_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
)

type extauthConfig = extauthv1.ExtAuthConfig

// mustVec is the metric name with these label values, as a Collector for testutil;
// a metric never set reads 0.
func mustVec(t *testing.T, s *testServer, name string, labels ...string) prometheus.Collector {
	t.Helper()
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var value float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				value = m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "read"}, func() float64 { return value })
}

func matches(m *dto.Metric, labels []string) bool {
	if len(m.GetLabel()) != len(labels) {
		return false
	}
	for i, l := range m.GetLabel() {
		if l.GetValue() != labels[i] {
			return false
		}
	}
	return true
}

func sortStrings(s []string) { slices.Sort(s) }
