package benchkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestMetric(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("# HELP drops_total dropped\n# TYPE drops_total counter\n" +
			"drops_total{role=\"a\"} 2\ndrops_total{role=\"b\"} 3\ndrops_total_more 100\nheap_bytes 4.5e+06\n"))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"drops_total", 5},    // every label set, not drops_total_more
		{"heap_bytes", 4.5e6}, // one sample
		{"absent", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Metric(context.Background(), srv.URL, tc.name)
			if err != nil || got != tc.want {
				t.Errorf("Metric(%s) = %v, %v; want %v", tc.name, got, err, tc.want)
			}
		})
	}
}
