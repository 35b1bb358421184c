package snapshots

import (
	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
)

// Metrics are the control plane's stage metrics: translation time per run, and, read
// from the stages at each scrape, the snapshot version and resources by kind and state.
type Metrics struct {
	stages    func() pipeline.Stages
	translate prometheus.Histogram
	version   *prometheus.Desc
	resources *prometheus.Desc
	problems  *prometheus.Desc
}

// NewMetrics registers the stage metrics on reg.
func NewMetrics(reg prometheus.Registerer, stages func() pipeline.Stages) *Metrics {
	m := &Metrics{
		stages: stages,
		translate: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gatehouse_controlplane_translate_seconds",
			Help:    "Time to validate and translate every resource in one run (publishing excluded).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10)}),
		version: prometheus.NewDesc("gatehouse_controlplane_snapshot_version",
			"Runs of the pipeline since the control plane started (the version /snapshots/* show).", nil, nil),
		resources: prometheus.NewDesc("gatehouse_controlplane_resources",
			"Resources known to the control plane, by kind and state.", []string{"kind", "state"}, nil),
		problems: prometheus.NewDesc("gatehouse_controlplane_source_problems",
			"Files (or folders) the source could not read; their last good resources keep serving.", nil, nil),
	}
	reg.MustRegister(m.translate, m)
	return m
}

// Observe records one run; call it after each run of the pipeline.
func (m *Metrics) Observe(st pipeline.Stages) { m.translate.Observe(st.Translate.Seconds()) }

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.version
	ch <- m.resources
	ch <- m.problems
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	st := m.stages()
	ch <- prometheus.MustNewConstMetric(m.version, prometheus.GaugeValue, float64(st.Version))
	if st.Edge == nil {
		return
	}
	type ks struct{ kind, state string }
	counts := map[ks]int{}
	for r := range st.Edge.Resources.Values() {
		counts[ks{r.Kind, string(r.State())}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(m.resources, prometheus.GaugeValue, float64(n), k.kind, k.state)
	}
	ch <- prometheus.MustNewConstMetric(m.problems, prometheus.GaugeValue, float64(len(st.Edge.Problems)))
}
