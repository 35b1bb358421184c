package observe_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestObservabilityDocBlocks: the Settings and AuthConfig that docs/operating.md shows
// for tracing and decision-log shares, read by a real control plane, are served as the
// doc says: the gateway proxy's listener traces with Envoy's OpenTelemetry tracer toward
// a collector cluster of that address, and extauth's config carries the share. The dev
// gateway (`gatehouse gateway`, Envoy's stand-in) takes the traced listener: it opens
// it, and the control plane counts no NACK.
func TestObservabilityDocBlocks(t *testing.T) {
	resources := t.TempDir()
	testbin.WriteFile(t, filepath.Join(resources, "settings.yaml"), testbin.DocBlock(t, "docs/operating.md", "<!-- settings-tracing"))
	testbin.WriteFile(t, filepath.Join(resources, "auth_config.yaml"), testbin.DocBlock(t, "docs/operating.md", "<!-- authconfig-decision-log"))
	xdsAddr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	cp := testbin.Start(t, nil, testbin.Gatehouse(t), "controlplane", "--resources", resources, "--xds-listen", xdsAddr, "--admin-listen", admin, "--no-state")
	testbin.WaitTCP(t, cp, admin, 20*time.Second)
	for _, tc := range []struct {
		role string
		want []string
	}{
		{role: "gatehouse-system~gateway-proxy", want: []string{`"envoy.tracers.opentelemetry"`, `"gatehouse-otlp-collector"`,
			`"otel-collector.monitoring"`, `"portValue":4317`, `"serviceName":"gatehouse-gateway-proxy"`}},
		{role: "extauth", want: []string{`"decisionLogSampleRatio":0.05`}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			testbin.Eventually(t, 20*time.Second, func() error {
				_, b, err := testbin.Get("http://" + admin + "/snapshots/xds?role=" + tc.role)
				if err != nil {
					return err
				}
				compact := strings.NewReplacer(" ", "", "\n", "").Replace(b)
				for _, w := range tc.want {
					if !strings.Contains(compact, w) {
						return fmt.Errorf("/snapshots/xds?role=%s (%d bytes) lacks %s", tc.role, len(b), w)
					}
				}
				return nil
			})
		})
	}
	gw := testbin.FreeAddr(t)
	g := testbin.Start(t, nil, testbin.Gatehouse(t), "gateway", "--xds", xdsAddr, "--role", "gatehouse-system~gateway-proxy",
		"--listen", gw, "--https-listen", "", "--admin-listen", "", "--echo-listen", testbin.FreeAddr(t))
	testbin.WaitTCP(t, g, gw, 30*time.Second)
	testbin.Eventually(t, 20*time.Second, func() error {
		m, err := testbin.Scrape(admin)
		if err != nil {
			return err
		}
		if strings.Contains(m, "gatehouse_xds_nacks_total{") {
			return fmt.Errorf("the gateway NACKed: %s", m[strings.Index(m, "gatehouse_xds_nacks_total{"):])
		}
		if !strings.Contains(m, `gatehouse_xds_acks_total{role="gatehouse-system~gateway-proxy",type="type.googleapis.com/envoy.config.listener.v3.Listener"}`) {
			return fmt.Errorf("no ACK of the gateway's listener yet")
		}
		return nil
	})
}
