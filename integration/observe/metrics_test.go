package observe_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// missingPlugin is an AuthConfig whose plugin file does not exist: extauth NACKs it.
const missingPlugin = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: missing-plugin
  namespace: gatehouse-system
spec:
  configs:
    - pluginAuth:
        name: no_such_plugin
        exportedSymbolName: Plugin
`

// TestDashboardAndAlertsQueryRealMetrics: every metric the chart's Grafana dashboard and
// PrometheusRule query is in a real /metrics scrape of a running control plane and
// extauth, speaking xDS over mutual TLS as the chart can, after Checks that allow and
// deny and a config that extauth rejects.
func TestDashboardAndAlertsQueryRealMetrics(t *testing.T) {
	root := testbin.Root(t)
	resources := t.TempDir()
	for _, f := range []string{"auth_config.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "default", f))
		if err != nil {
			t.Fatal(err)
		}
		testbin.WriteFile(t, filepath.Join(resources, f), string(b))
	}

	certs := t.TempDir()
	if _, err := mtls.Generate(mtls.GenerateOptions{Out: certs, TrustDomain: "cluster.local", Namespace: "gatehouse-system",
		CALifetime: 24 * time.Hour, Lifetime: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	bin := testbin.Gatehouse(t)
	xdsAddr, cpAdmin, exAddr, exAdmin := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	cp := testbin.Start(t, nil, bin, "controlplane", "--resources", resources, "--xds-listen", xdsAddr, "--admin-listen", cpAdmin,
		"--xds-tls-dir", filepath.Join(certs, mtls.RoleControlplane))
	testbin.WaitTCP(t, cp, xdsAddr, 20*time.Second)
	ex := testbin.Start(t, nil, bin, "extauth", "--xds", xdsAddr, "--plugin-dir", testbin.SamplePlugins(t), "--listen", exAddr,
		"--admin-listen", exAdmin, "--decision-log", "stdout", "--xds-tls-dir", filepath.Join(certs, mtls.RoleExtauth))
	testbin.WaitTCP(t, ex, exAddr, 20*time.Second)

	client := authv3.NewAuthorizationClient(testbin.Dial(t, exAddr))
	var scraped string
	added := false
	testbin.Eventually(t, 20*time.Second, func() error {
		for _, v := range []string{"alpha", "nope"} {
			if _, err := client.Check(context.Background(), pluginCheck(v)); err != nil {
				return err
			}
		}
		exMetrics, err := testbin.Scrape(exAdmin)
		if err != nil {
			return err
		}
		if !strings.Contains(exMetrics, `outcome="allowed"`) {
			return fmt.Errorf("no allowed Check counted yet")
		}
		cpMetrics, err := testbin.Scrape(cpAdmin)
		if err != nil {
			return err
		}
		if !strings.Contains(cpMetrics, "gatehouse_xds_acks_total{") {
			return fmt.Errorf("no ACK counted yet")
		}
		if !added {
			// Once the first configs are acknowledged, one extauth cannot build.
			testbin.WriteFile(t, filepath.Join(resources, "missing_plugin.yaml"), missingPlugin)
			added = true
		}
		if !strings.Contains(cpMetrics, "gatehouse_xds_nacks_total{") {
			return fmt.Errorf("no NACK of the missing plugin's config counted yet")
		}
		scraped = exMetrics + cpMetrics
		return nil
	})

	chart := filepath.Join(root, "deploy", "helm", "gatehouse", "files")
	names := map[string][]string{}
	for _, f := range []string{"grafana-dashboard.json", "prometheus-rules.yaml"} {
		b, err := os.ReadFile(filepath.Join(chart, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range regexp.MustCompile(`gatehouse_[a-z_]+`).FindAllString(string(b), -1) {
			if !slices.Contains(names[n], f) {
				names[n] = append(names[n], f)
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("%d metric names found in the dashboard and rules", len(names))
	}
	for n, files := range names {
		if !regexp.MustCompile(`(?m)^(# TYPE )?` + n + `[{ ]`).MatchString(scraped) {
			t.Errorf("%v query %s, which no running binary exposes", files, n)
		}
	}
}

// pluginCheck is a CheckRequest for the example AuthConfig with x-required: v.
func pluginCheck(v string) *authv3.CheckRequest {
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "localhost", Headers: map[string]string{"x-required": v},
		}},
		ContextExtensions: map[string]string{"config_id": "gatehouse-system.plugin-auth"},
	}}
}
