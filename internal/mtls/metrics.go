package mtls

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// loaded is every Folder this process has loaded, by folder path.
var loaded sync.Map

// expiryDesc is the expiry of a loaded folder's certificates.
var expiryDesc = prometheus.NewDesc("gatehouse_tls_certificate_expiry_timestamp_seconds",
	"When a certificate this process uses expires (its NotAfter, Unix seconds), by certificate folder and file: "+
		"tls.crt, its own; ca.crt, the first of its CAs to expire. Read again with the folder (a rotated Secret).",
	[]string{"dir", "file"}, nil)

// ExpiryCollector reports gatehouse_tls_certificate_expiry_timestamp_seconds for every
// certificate folder the process has loaded, as last read (it looks at changed files
// first, as a handshake would). A process with no folder reports nothing.
func ExpiryCollector() prometheus.Collector { return expiryCollector{} }

type expiryCollector struct{}

func (expiryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- expiryDesc }

func (expiryCollector) Collect(ch chan<- prometheus.Metric) {
	loaded.Range(func(_, v any) bool {
		f := v.(*Folder)
		own, ca := f.expiry()
		ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, unix(own), f.dir, CertFile)
		if !ca.IsZero() {
			ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, unix(ca), f.dir, CAFile)
		}
		return true
	})
}

// expiry is the NotAfter of the folder's own certificate and of its first CA to expire.
func (f *Folder) expiry() (own, ca time.Time) {
	f.refresh()
	f.mu.Lock()
	defer f.mu.Unlock()
	own = f.self.NotAfter
	for _, c := range f.bundle.X509Authorities() {
		if ca.IsZero() || c.NotAfter.Before(ca) {
			ca = c.NotAfter
		}
	}
	return own, ca
}

func unix(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// remember adds f to what ExpiryCollector reports.
func remember(f *Folder) { loaded.Store(filepath.Clean(f.dir), f) }
