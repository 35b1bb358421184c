package observe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// shareConfig is an AuthConfig running the sample plugin, with spec.decisionLog when
// decisionLog is not empty.
func shareConfig(name, decisionLog string) string {
	s := `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ` + name + `, namespace: team}
spec:
  configs:
    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x-required, AllowedValues: [alpha]}}
`
	if decisionLog != "" {
		s += "  decisionLog: " + decisionLog + "\n"
	}
	return s
}

// TestDecisionLogShareOfAnAuthConfig: an AuthConfig's spec.decisionLog.sampleRatio
// reaches extauth through the control plane and overrides --decision-log-sample for
// its config_id: with the global share at 1, the Checks of a config whose share is 0
// write no record while those of a config without a share of its own each write one;
// with the global share at 0, a config whose share is 1 records every Check.
func TestDecisionLogShareOfAnAuthConfig(t *testing.T) {
	for _, tc := range []struct {
		name        string
		global      string
		quiet, loud string // spec.decisionLog of the two configs
	}{
		{name: "config share 0 under global 1", global: "1", quiet: "{sampleRatio: 0}", loud: ""},
		{name: "config share 1 under global 0", global: "0", quiet: "", loud: "{sampleRatio: 1}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resources := t.TempDir()
			testbin.WriteFile(t, filepath.Join(resources, "quiet.yaml"), shareConfig("quiet", tc.quiet))
			testbin.WriteFile(t, filepath.Join(resources, "loud.yaml"), shareConfig("loud", tc.loud))
			bin := testbin.Gatehouse(t)
			xdsAddr, cpAdmin, exAddr := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
			cp := testbin.Start(t, nil, bin, "controlplane", "--resources", resources, "--xds-listen", xdsAddr, "--admin-listen", cpAdmin)
			testbin.WaitTCP(t, cp, xdsAddr, 20*time.Second)
			ex := testbin.Start(t, nil, bin, "extauth", "--xds", xdsAddr, "--plugin-dir", testbin.SamplePlugins(t), "--listen", exAddr,
				"--decision-log", "stdout", "--decision-log-sample", tc.global, "--decision-log-rate", "0")
			testbin.WaitTCP(t, ex, exAddr, 20*time.Second)
			client := authv3.NewAuthorizationClient(testbin.Dial(t, exAddr))
			check := func(id, v, path string) error {
				r := pluginCheck(v)
				r.Attributes.ContextExtensions["config_id"] = id
				r.Attributes.Request.Http.Path = path
				resp, err := client.Check(context.Background(), r)
				if err == nil && resp.GetStatus().GetCode() != 0 && v == "alpha" {
					err = fmt.Errorf("Check of %s: code %d, want OK", id, resp.GetStatus().GetCode())
				}
				return err
			}
			// Both configs serve once a Check of each is allowed.
			testbin.Eventually(t, 20*time.Second, func() error {
				if err := check("team.quiet", "alpha", "/warm"); err != nil {
					return err
				}
				return check("team.loud", "alpha", "/warm")
			})
			const n = 20
			for i := range n {
				v, path := []string{"alpha", "nope"}[i%2], fmt.Sprintf("/share/%d", i)
				if err := check("team.quiet", v, path); err != nil {
					t.Fatal(err)
				}
				if err := check("team.loud", v, path); err != nil {
					t.Fatal(err)
				}
			}
			// Records reach the output in the order the Checks were answered: once the
			// last Check's record is there, so is every record before it.
			last := fmt.Sprintf("/share/%d", n-1)
			var got map[string]int
			testbin.Eventually(t, 10*time.Second, func() error {
				got = map[string]int{}
				seen := false
				for _, r := range records(ex.Output()) {
					if strings.HasPrefix(r.Path, "/share/") {
						got[r.ConfigID]++
						seen = seen || r.Path == last && r.ConfigID == "team.loud"
					}
				}
				if !seen {
					return fmt.Errorf("no record of team.loud's last Check yet")
				}
				return nil
			})
			if got["team.quiet"] != 0 || got["team.loud"] != n {
				t.Errorf("decision records by config_id = %v, want team.loud %d and no team.quiet", got, n)
			}
		})
	}
}

type decisionRecord struct {
	ConfigID string `json:"config_id"`
	Decision string `json:"decision"`
	Path     string `json:"path"`
}

// records are the decision records among a process's output lines, in order.
func records(out string) []decisionRecord {
	var rs []decisionRecord
	for _, line := range strings.Split(out, "\n") {
		var r decisionRecord
		if json.Unmarshal([]byte(line), &r) == nil && r.Decision != "" {
			rs = append(rs, r)
		}
	}
	return rs
}
