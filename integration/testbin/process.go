package testbin

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/internal/syncbuf"
)

// Process is a running command whose output is kept for the test log.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	out  syncbuf.Buffer
}

// Write collects the process's output.
func (p *Process) Write(b []byte) (int, error) { return p.out.Write(b) }

// Output is what the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// Start runs bin with args and env (added to this process's environment). The process
// is stopped with SIGTERM (SIGKILL after 5 s) when the test ends, and its output is
// logged if the test failed.
func Start(t testing.TB, env []string, bin string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return StartCmd(t, cmd)
}

// StartCmd is Start of a command whose folder, environment and arguments the caller
// set; its output goes to the Process.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{cmd: cmd, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("testbin: start %s: %v", cmd.Path, err)
	}
	done := p.done
	go func() { _ = p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(cmd.Path), p.Output())
		}
	})
	return p
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitTCP waits until addr accepts connections, failing the test after timeout or
// when p (if not nil) exits first.
func WaitTCP(t testing.TB, p *Process, addr string, timeout time.Duration) {
	t.Helper()
	if err := listening(p, addr, timeout); err != nil {
		t.Fatal(err)
	}
}

// ErrExited is the error of Listening when the process ended before its address
// accepted connections, as when another process took its port between FreeAddr and
// the bind.
var ErrExited = errors.New("exited")

// Listening waits until addr accepts connections. Its error is ErrExited when the
// process ends first, and another one when timeout passes; both hold its output.
func (p *Process) Listening(addr string, timeout time.Duration) error {
	return listening(p, addr, timeout)
}

func listening(p *Process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if p != nil && p.Exited() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p != nil && p.Exited() {
		return fmt.Errorf("testbin: the process %w before %s accepted connections:\n%s", ErrExited, addr, p.Output())
	}
	out := ""
	if p != nil {
		out = p.Output()
	}
	return fmt.Errorf("testbin: %s not accepting connections after %s\n%s", addr, timeout, out)
}

// Eventually retries check every 50ms until it returns nil or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not reached within %s: %v", timeout, err)
}

// Kill ends the process with SIGKILL, as a crash would, and waits until it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits until the process has exited, failing the test after timeout.
func (p *Process) Wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("testbin: the process did not exit within %s\n%s", timeout, p.Output())
	}
}
