package mtls_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// TestExpiryCollectorReportsLoadedFolders: gatehouse_tls_certificate_expiry_timestamp_seconds
// is the NotAfter of a loaded folder's own certificate (tls.crt) and of its CA (ca.crt).
func TestExpiryCollectorReportsLoadedFolders(t *testing.T) {
	out := t.TempDir()
	now := time.Now().Truncate(time.Second)
	gen, err := mtls.Generate(mtls.GenerateOptions{Out: out, TrustDomain: "cluster.local", Namespace: "gh",
		CALifetime: 48 * time.Hour, Lifetime: 6 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := mtls.Load(gen[0].Dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(mtls.ExpiryCollector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if filepath.Clean(labels["dir"]) == filepath.Clean(f.Dir()) {
				got[labels["file"]] = m.GetGauge().GetValue()
			}
		}
	}
	want := map[string]time.Time{mtls.CertFile: gen[0].NotAfter, mtls.CAFile: now.Add(48 * time.Hour)}
	for file, at := range want {
		if v, ok := got[file]; !ok || v != float64(at.Unix()) {
			t.Errorf("%s expiry = %v (reported %v), want %d (%s)", file, v, ok, at.Unix(), at)
		}
	}
}
