package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// Issue 12, finding 2: with `isolation: process`, a plugin that panics on a goroutine
// of its own or allocates past its memoryLimit ends only its worker. The extauth server
// keeps serving every route, the isolated step fails closed (500) while its worker is
// restarted, and then serves again.
func TestABIServerIsolatedStep(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	b := newABIBuilds(t)
	dir := t.TempDir()
	srvInstall(t, b.build(t, requiredHeader), dir, "required_header.so")
	srvInstall(t, b.build(t, testdataPlugin("isolated")), dir, "isolated.so")
	s := startSrv(t, gatehouse, dir, srvSettings+
		srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep)+`---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: isolated, namespace: default}
spec:
  configs:
    - pluginAuth: {name: isolated, exportedSymbolName: Plugin, isolation: process, memoryLimit: 256Mi, config: {}}
`)
	alpha := map[string]string{"x-required": "alpha"}
	allowedBy := func(mode string) (string, error) {
		v := s.verdict(t, "default.isolated", map[string]string{"x-mode": mode})
		if v.RPC != code.Code_OK {
			return "", fmt.Errorf("default.isolated: %v, want allowed", v)
		}
		return v.Headers["x-worker-pid"], nil
	}
	var pid string
	testbin.Eventually(t, time.Minute, func() (err error) { pid, err = allowedBy(""); return err })

	for _, mode := range []string{"goroutine-panic", "alloc"} {
		t.Run(mode, func(t *testing.T) {
			if got := s.verdict(t, "default.isolated", map[string]string{"x-mode": mode}); !cmp.Equal(got, srvFailed) {
				t.Errorf("default.isolated with x-mode %s: %v, want 500", mode, got)
			}
			if s.proc.Exited() {
				t.Fatalf("gatehouse extauth exited:\n%s", s.proc.Output())
			}
			if got := s.verdict(t, "default.good", alpha); !cmp.Equal(got, srvMatched) {
				t.Errorf("default.good after the worker died: %v, want allowed", got)
			}
			testbin.Eventually(t, time.Minute, func() error {
				now, err := allowedBy("")
				if err == nil && now == pid {
					return fmt.Errorf("still answered by worker %s", pid)
				}
				pid = now
				return err
			})
		})
	}
	if n := len(s.logs("error", "isolated plugin worker died; its steps fail closed until it is restarted")); n != 2 {
		t.Errorf("%d worker deaths logged, want 2", n)
	}
	if !strings.Contains(s.proc.Output(), "more than its memoryLimit of 268435456 bytes") {
		t.Errorf("the memory limit is not named in the log")
	}
}
