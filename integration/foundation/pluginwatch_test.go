package foundation_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const lateConfig = `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: late, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: late
        exportedSymbolName: Plugin
        config: {Header: x-late, Value: arrived}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: present, namespace: default}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha]}
`

// TestExtauthServesPluginThatAppearsLater: an AuthConfig whose plugin file is not there
// yet is rejected (and denies) while the others serve; when an init container (here, a
// copy and rename) delivers the file, the config is built and served without restart.
func TestExtauthServesPluginThatAppearsLater(t *testing.T) {
	built := plugins(t)
	dir := t.TempDir()
	copyFile(t, filepath.Join(built, "required_header.so"), filepath.Join(dir, "required_header.so"))

	bin := testbin.Gatehouse(t)
	cfg := filepath.Join(t.TempDir(), "authconfigs.yaml")
	writeFile(t, cfg, lateConfig)
	addr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := testbin.Start(t, nil, bin, "extauth", "--config", cfg, "--plugin-dir", dir, "--listen", addr, "--admin-listen", admin)
	testbin.WaitTCP(t, p, addr, 10*time.Second)
	testbin.WaitTCP(t, p, admin, 10*time.Second)
	ex := &extauthProc{proc: p, client: dial(t, addr), config: cfg}

	alpha := map[string]string{"x-required": "alpha"}
	if got := verdictOf(ex.check(t, "default.late", alpha)); !cmp.Equal(got, forbidden) {
		t.Fatalf("late before its file exists: %+v, want 403", got)
	}
	if got := verdictOf(ex.check(t, "default.present", alpha)); !cmp.Equal(got, allowedWithMatch) {
		t.Fatalf("present: %+v, want allowed", got)
	}
	if out := p.Output(); !strings.Contains(out, "late.so") || !strings.Contains(out, "auth config rejected") {
		t.Errorf("the missing file is not reported at ERROR:\n%s", out)
	}

	out, exitCode := runStatus(t, bin, admin)
	if exitCode != 1 || !strings.Contains(out, "default.late") || !strings.Contains(out, "Rejected") || !strings.Contains(out, "no such plugin file") {
		t.Errorf("status before delivery: exit %d\n%s\nwant exit 1 naming default.late as Rejected with the reason", exitCode, out)
	}

	tmp := filepath.Join(dir, ".late.so.tmp")
	// A different plugin than the one already loaded: Go refuses a second copy of a
	// loaded plugin under another name.
	copyFile(t, filepath.Join(built, "stamp.so"), tmp)
	if err := os.Rename(tmp, filepath.Join(dir, "late.so")); err != nil {
		t.Fatal(err)
	}
	testbin.Eventually(t, 10*time.Second, func() error {
		want := verdict{RPC: code.Code_OK, Headers: map[string]string{"x-late": "arrived"}}
		if got := verdictOf(ex.check(t, "default.late", alpha)); !cmp.Equal(got, want) {
			return fmt.Errorf("late after its file arrived: %+v", got)
		}
		return nil
	})
	if out, exitCode := runStatus(t, bin, admin); exitCode != 0 || strings.Contains(out, "Rejected") {
		t.Errorf("status after delivery: exit %d\n%s\nwant exit 0, all Accepted", exitCode, out)
	}
}

// runStatus runs `gatehouse extauth status` and returns its output and exit code.
func runStatus(t *testing.T, bin, admin string) (string, int) {
	t.Helper()
	out, err := exec.Command(bin, "extauth", "status", "--admin", admin).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return string(out), 0
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
