package oidc_test

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/server/oidc"
)

// TestStoreHealthFollowsRedis: with a real redis-server, gatehouse_extauth_session_store_up
// is 1 for the store's address and the PING's round trip is reported; once the server
// is stopped, up is 0 and no round trip is; a closed store is no longer reported.
func TestStoreHealthFollowsRedis(t *testing.T) {
	r := harness.StartRedis(t)
	store := newReplica(t, []string{r.Addr})
	reg := prometheus.NewRegistry()
	reg.MustRegister(oidc.Collectors()...)

	up, ping := storeHealth(t, reg, r.Addr)
	if up != "1" || ping == "" {
		t.Fatalf("with redis-server running: up %q, ping %q; want 1 and a round trip", up, ping)
	}
	r.Stop()
	if up, ping = storeHealth(t, reg, r.Addr); up != "0" || ping != "" {
		t.Fatalf("with redis-server stopped: up %q, ping %q; want 0 and none", up, ping)
	}
	store.Close()
	if up, ping = storeHealth(t, reg, r.Addr); up != "" || ping != "" {
		t.Fatalf("with the store closed: up %q, ping %q; want no series", up, ping)
	}
}

// storeHealth is the up and ping_seconds values of address in one scrape ("" when absent).
func storeHealth(t *testing.T, reg *prometheus.Registry, address string) (up, ping string) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != address {
				continue
			}
			v := strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64)
			switch mf.GetName() {
			case "gatehouse_extauth_session_store_up":
				up = v
			case "gatehouse_extauth_session_store_ping_seconds":
				if m.GetGauge().GetValue() <= 0 {
					t.Errorf("ping_seconds %v, want a positive round trip", m.GetGauge().GetValue())
				}
				ping = v
			}
		}
	}
	return up, ping
}
