// Package harness starts the real parts the integration tests meet — an OpenID
// provider (panva's oidc-provider on node) and redis-server — as processes on
// 127.0.0.1 free ports, waits until they answer, and stops them (by pid) when the
// test ends. A missing dependency fails the test with the command that installs it.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
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

// process is a started child with its output kept for failure messages.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	once sync.Once
	done chan struct{}
}

func start(t testing.TB, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{name: name, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness: start %s: %v", name, err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

// stop kills the process this harness started, by its pid, and waits for it.
func (p *process) stop() {
	p.once.Do(func() {
		p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	})
}

// Output is what the process printed so far.
func (p *process) Output() string { return p.out.String() }

// waitTCP waits until addr accepts connections, the process exits, or the timeout passes.
func (p *process) waitTCP(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	if err := p.listening(addr, timeout); err != nil {
		t.Fatal(err)
	}
}

// errExited is returned by listening when the process ended before it listened, as
// when another process took its port between FreePort and the bind.
var errExited = errors.New("exited before listening")

func (p *process) listening(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("harness: %s %w on %s:\n%s", p.name, errExited, addr, p.Output())
		case <-ctx.Done():
			return fmt.Errorf("harness: %s did not listen on %s within %s:\n%s", p.name, addr, timeout, p.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
