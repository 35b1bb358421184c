// Package testbin builds and runs the real gatehouse binary and real plugins for
// end-to-end tests: same toolchain, same flags as `make build` and `make plugins`.
package testbin

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Root is the repository root (the folder holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testbin: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Main runs a package's tests and then removes the folders this package built the
// gatehouse binary and plugins into. Every test package that uses testbin calls it:
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
//
// Without it each test process would leave the binary and plugins it built behind in
// the temporary folder.
func Main(m *testing.M) int { return Wrap(m.Run) }

// Wrap is Main for a package whose TestMain already has a runner of its own (an API
// server, say): it calls run and then removes the folders.
//
// It also points XDG_STATE_HOME, which every process started inherits, at a folder of
// its own, so a control plane's state file (written by default) never lands in the
// home folder of whoever runs the tests.
func Wrap(run func() int) int {
	temps.mu.Lock()
	temps.wrapped = true
	temps.mu.Unlock()
	defer removeTemps()
	if dir, err := tempDir("gatehouse-state-"); err == nil {
		_ = os.Setenv("XDG_STATE_HOME", dir)
	}
	return run()
}

// temps are the folders made by TempDir, removed when Main returns.
var temps struct {
	mu      sync.Mutex
	wrapped bool
	dirs    []string
}

// TempDir makes a folder that lives as long as the test process: for artifacts built
// once and shared by its tests. It fails the test when the package has no TestMain
// calling Main, since the folder would then never be removed.
func TempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := tempDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func tempDir(prefix string) (string, error) {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	if !temps.wrapped {
		return "", errors.New("testbin: this test package needs func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) } " +
			"so that what it builds is removed afterwards")
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	temps.dirs = append(temps.dirs, dir)
	return dir, nil
}

func removeTemps() {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	for _, dir := range temps.dirs {
		_ = os.RemoveAll(dir)
	}
	temps.dirs = nil
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Gatehouse builds the gatehouse binary once per test process and returns its path.
func Gatehouse(t testing.TB) string {
	t.Helper()
	root := Root(t)
	buildOnce.Do(func() {
		dir, err := tempDir("gatehouse-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gatehouse")
		buildErr = goBuild(root, "-o", binPath, "./cmd/gatehouse")
	})
	if buildErr != nil {
		t.Fatalf("testbin: build gatehouse: %v", buildErr)
	}
	return binPath
}

// Plugin builds the plugin package pkg (a path relative to the repository root, such
// as "./plugins/required_header") into dir/name.
func Plugin(t testing.TB, pkg, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if err := goBuild(Root(t), "-buildmode=plugin", "-o", out, pkg); err != nil {
		t.Fatalf("testbin: build plugin %s: %v", pkg, err)
	}
	return out
}

func goBuild(root string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// FreeAddr returns a 127.0.0.1 address with a port that was free a moment ago and that
// no other FreeAddr (or harness.FreePort) of this process returned. The port is below
// the kernel's ephemeral range (listenBelowEphemeral).
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := ports.free(listenBelowEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// listenBelowEphemeral listens on a random free port below the kernel's ephemeral
// range. A port of that range ("127.0.0.1:0") may be handed to another process's
// outgoing connection or listener between FreeAddr's check and the test's own bind
// (make test runs the integration packages as parallel processes), and the test's
// bind then fails with "address already in use". Below the range, only another test's
// FreeAddr picks ports, at random among thousands.
func listenBelowEphemeral() (net.Listener, error) {
	low := ephemeralLow()
	var err error
	for range 100 {
		port := max(1024, low-12000) + rand.IntN(min(12000, low-1024))
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("testbin: no free port below %d: %w", low, err)
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's default,
// 32768, where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 2048 {
		return 32768
	}
	return low
}

// ports are the ports FreeAddr returned in this process. Once its listener is closed,
// the kernel may hand the same port out again, and two of one test's addresses on one
// port would leave one of its processes unable to listen.
var ports = &handedOut{seen: map[int]bool{}}

type handedOut struct {
	mu   sync.Mutex
	seen map[int]bool
}

// free is the address of a listener listen opens (and free closes) on a port not
// returned before.
func (h *handedOut) free(listen func() (net.Listener, error)) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for range 1000 {
		l, err := listen()
		if err != nil {
			return "", err
		}
		addr := l.Addr().(*net.TCPAddr)
		l.Close()
		if !h.seen[addr.Port] {
			h.seen[addr.Port] = true
			return addr.String(), nil
		}
	}
	return "", errors.New("testbin: every free port the kernel offered was handed out before")
}

// Process is a running command whose output is kept for the test log.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	mu   sync.Mutex
	out  bytes.Buffer
}

// Write collects the process's output.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Output is what the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Start runs bin with args and env (added to this process's environment). The process
// is stopped with SIGTERM (SIGKILL after 5 s) when the test ends, and its output is
// logged if the test failed.
func Start(t testing.TB, env []string, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("testbin: start %s: %v", bin, err)
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
			t.Logf("output of %s:\n%s", filepath.Base(bin), p.Output())
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

// WaitTCP waits until addr accepts connections, failing the test after timeout.
func WaitTCP(t testing.TB, p *Process, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if p != nil && p.Exited() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p != nil && p.Exited() {
		t.Fatalf("testbin: the process exited before %s accepted connections:\n%s", addr, p.Output())
	}
	out := ""
	if p != nil {
		out = p.Output()
	}
	t.Fatalf("testbin: %s not accepting connections after %s\n%s", addr, timeout, out)
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
