package oidc_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gatehouse.dev/gatehouse/server/oidc"
)

// TestUnreachableStoreIsCounted: a session load from a Redis nobody listens on fails,
// and gatehouse_extauth_session_store_errors_total counts it (the chart's
// GatehouseSessionStoreUnreachable alert), without the cookie in any label.
func TestUnreachableStoreIsCounted(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	reg := prometheus.NewRegistry()
	reg.MustRegister(oidc.Collectors()...)
	before := loadErrors(t, reg)
	store := oidc.NewRedisStore([]string{addr}, time.Hour)
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cookie := strings.Repeat("a", 43)
	if _, err := store.Load(ctx, cookie); err == nil {
		t.Fatal("Load from an unreachable Redis succeeded")
	}
	if got := loadErrors(t, reg); got != before+1 {
		t.Errorf("load errors counted = %v, want %v", got, before+1)
	}
}

func loadErrors(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "gatehouse_extauth_session_store_errors_total")
	if err != nil || n != 4 {
		t.Fatalf("session store error series = %d, %v; want one per operation from the start", n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mfs[0].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" && l.GetValue() == "load" {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatal("no load series")
	return 0
}
