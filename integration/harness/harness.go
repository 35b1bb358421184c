// Package harness starts the real parts the integration tests meet — an OpenID
// provider (panva's oidc-provider on node) and redis-server — as processes on
// 127.0.0.1 free ports, waits until they answer, and stops them (by pid) when the
// test ends. A missing dependency fails the test with the command that installs it.
package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, one that no
// other FreePort or testbin.FreeAddr of this process returned.
func FreePort(t testing.TB) int {
	t.Helper()
	_, port, err := net.SplitHostPort(testbin.FreeAddr(t))
	if err != nil {
		t.Fatalf("harness: free port: %v", err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("harness: free port: %v", err)
	}
	return n
}

// Dir is the integration folder of the repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// RepoRoot is the repository root.
func RepoRoot() string { return filepath.Dir(Dir()) }

// process is a started child, named in failure messages.
type process struct {
	name string
	*testbin.Process
}

// start runs cmd until the test ends, when it is killed (SIGKILL) at once: neither
// redis-server nor the provider keeps anything a clean stop would save.
func start(t testing.TB, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{name: name, Process: testbin.StartCmd(t, cmd)}
	t.Cleanup(p.stop)
	return p
}

// stop kills the process this harness started, by its pid, and waits for it.
func (p *process) stop() { p.Kill() }

// listening waits until addr accepts connections; its error is testbin.ErrExited when
// the process ended first, as when another process took its port between FreePort and
// the bind.
func (p *process) listening(addr string, timeout time.Duration) error {
	if err := p.Listening(addr, timeout); err != nil {
		return fmt.Errorf("harness: %s: %w", p.name, err)
	}
	return nil
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func mustExist(t testing.TB, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("harness: %s is missing (%s). Run `make test`, which installs it (%s).", what, path, fmt.Sprint(installHint[what]))
	}
}

var installHint = map[string]string{
	"oidc-provider": "cd integration/oidcprovider && npm ci",
	"node":          "apt-get install -y nodejs npm",
	"redis-server":  "apt-get install -y redis-server",
	"chromium":      "apt-get install -y chromium",
}
