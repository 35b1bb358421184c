package testbin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMetric(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`# TYPE gatehouse_checks_total counter
gatehouse_checks_total{outcome="allowed"} 3
gatehouse_checks_total{outcome="denied"} 4
gatehouse_checks_total_extra 100
gatehouse_up 1
`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name, series string
		want         float64
	}{
		{name: "a name sums every label set", series: "gatehouse_checks_total", want: 7},
		{name: "a name with labels is that sample", series: `gatehouse_checks_total{outcome="denied"}`, want: 4},
		{name: "a name without labels", series: "gatehouse_up", want: 1},
		{name: "no sample is 0", series: "gatehouse_missing", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Metric(addr, tc.series)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Metric(%s) = %v, want %v", tc.series, got, tc.want)
			}
		})
	}
}
