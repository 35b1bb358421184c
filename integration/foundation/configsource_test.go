package foundation_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
)

func requiredHeaderConfig(value string) string {
	return `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: app, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [` + value + `]}
`
}

// sourceProblemMetric reads gatehouse_extauth_config_source_problem for path.
func sourceProblemMetric(t *testing.T, admin, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	prefix := fmt.Sprintf("gatehouse_extauth_config_source_problem{path=%q} ", path)
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	return "absent"
}

// Regression (issue 12, findings 6 and 7): a file that failed to parse blocked every
// reload with only a log line to say so, and deleting the config folder and creating
// it again stopped reloading for good, with the status still Accepted throughout.
func TestExtauthConfigSourceProblems(t *testing.T) {
	bin := testbin.Gatehouse(t)
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "app.yaml")
	writeFile(t, file, requiredHeaderConfig("alpha"))
	addr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := testbin.Start(t, nil, bin, "extauth", "--config", dir, "--plugin-dir", plugins(t), "--listen", addr, "--admin-listen", admin)
	testbin.WaitTCP(t, p, admin, time.Minute)
	ex := &extauthProc{proc: p, client: dial(t, addr), config: dir}
	allows := func(value string) error {
		if got := verdictOf(ex.check(t, "default.app", map[string]string{"x-required": value})); !cmp.Equal(got, allowedWithMatch) {
			return fmt.Errorf("x-required: %s: %+v, want allowed", value, got)
		}
		return nil
	}
	if err := allows("alpha"); err != nil {
		t.Fatal(err)
	}
	if out, code := runStatus(t, bin, admin); code != 0 || strings.Contains(out, "source:") {
		t.Fatalf("status at start: exit %d\n%s", code, out)
	}

	t.Run("a file that does not parse is in the status and the metrics", func(t *testing.T) {
		writeFile(t, file, requiredHeaderConfig("beta")+"---\nkind: [unclosed\n")
		testbin.Eventually(t, 10*time.Second, func() error {
			if out, code := runStatus(t, bin, admin); code != 1 || !strings.Contains(out, "source:"+dir) ||
				!strings.Contains(out, file+":12: document 2: yaml: did not find expected ',' or ']' (in what starts on line 11)") {
				return fmt.Errorf("status: exit %d\n%s", code, out)
			}
			return nil
		})
		if v := sourceProblemMetric(t, admin, dir); v != "1" {
			t.Errorf("gatehouse_extauth_config_source_problem = %s, want 1", v)
		}
		if err := allows("alpha"); err != nil {
			t.Errorf("the last good config does not serve: %v", err)
		}
		writeFile(t, file, requiredHeaderConfig("beta"))
		testbin.Eventually(t, 10*time.Second, func() error { return allows("beta") })
		testbin.Eventually(t, 10*time.Second, func() error {
			if out, code := runStatus(t, bin, admin); code != 0 {
				return fmt.Errorf("status after the fix: exit %d\n%s", code, out)
			}
			return nil
		})
		if v := sourceProblemMetric(t, admin, dir); v != "0" {
			t.Errorf("gatehouse_extauth_config_source_problem after the fix = %s, want 0", v)
		}
	})

	t.Run("a folder deleted and created again is read again", func(t *testing.T) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		testbin.Eventually(t, 10*time.Second, func() error {
			if out, code := runStatus(t, bin, admin); code != 1 || !strings.Contains(out, dir+" is gone") {
				return fmt.Errorf("status with the folder gone: exit %d\n%s", code, out)
			}
			return nil
		})
		if err := allows("beta"); err != nil {
			t.Errorf("the last good config does not serve while the folder is gone: %v", err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, file, requiredHeaderConfig("gamma"))
		testbin.Eventually(t, 10*time.Second, func() error { return allows("gamma") })
		testbin.Eventually(t, 10*time.Second, func() error {
			if out, code := runStatus(t, bin, admin); code != 0 {
				return fmt.Errorf("status once the folder is back: exit %d\n%s", code, out)
			}
			return nil
		})
		writeFile(t, file, requiredHeaderConfig("delta"))
		testbin.Eventually(t, 10*time.Second, func() error { return allows("delta") })
	})
	checkLogKeys(t, p.Output())
}
