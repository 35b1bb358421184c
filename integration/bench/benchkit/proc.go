// Package benchkit is what every section of `make bench` uses: processes stopped by
// pid, pinning with taskset, CPU and memory from /proc, medians and their intervals,
// goal verdicts, and the generated parts of BENCHMARKS.md.
package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// command is exec.CommandContext with the child in its own process group: when ctx
// ends, the group gets SIGTERM, then SIGKILL after a grace period.
func command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Output runs a command to completion and returns its stdout; on failure the error
// carries the end of its stderr.
func Output(ctx context.Context, dir, name string, args ...string) (string, error) {
	out, _, err := OutputCPU(ctx, dir, name, args...)
	return out, err
}

// OutputCPU is Output that also returns the CPU time (user and system) the command used.
func OutputCPU(ctx context.Context, dir, name string, args ...string) (string, time.Duration, error) {
	cmd := command(ctx, dir, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return stdout.String(), cpu, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, Tail(stderr.String(), 40))
	}
	return stdout.String(), cpu, nil
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Proc is a long-running child, such as a server under test.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Log  string // file with the child's stdout and stderr
	done chan struct{}
	err  error // set when done is closed
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether p has stopped, and why, with the end of its log; nil while it runs.
func (p *Proc) Exited() error {
	select {
	case <-p.done:
		b, _ := os.ReadFile(p.Log)
		return fmt.Errorf("%s exited (%v); its log ends:\n%s", p.Name, p.err, Tail(string(b), 30))
	default:
		return nil
	}
}

// Procs stops, by pid, every Proc it started.
type Procs struct {
	mu    sync.Mutex
	procs []*Proc
}

// Start runs bin with args and env, its output going to logPath.
func (s *Procs) Start(name, logPath string, env []string, bin string, args ...string) (*Proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := command(context.Background(), "", bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, Log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return p, nil
}

// StopAll sends SIGTERM to each Proc's group, waits up to five seconds and then kills
// what is left. It may be called more than once.
func (s *Procs) StopAll() {
	s.mu.Lock()
	procs := s.procs
	s.procs = nil
	s.mu.Unlock()
	stop(procs)
}

// Stop stops p alone, as StopAll would, and forgets it.
func (s *Procs) Stop(p *Proc) {
	s.mu.Lock()
	s.procs = slices.DeleteFunc(s.procs, func(q *Proc) bool { return q == p })
	s.mu.Unlock()
	stop([]*Proc{p})
}

func stop(procs []*Proc) {
	for _, p := range procs {
		_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
			<-p.done
		}
	}
}

// Poll calls probe every interval until it succeeds, p exits, or limit passes.
func Poll(ctx context.Context, p *Proc, limit, interval time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if err := p.Exited(); err != nil {
			return err
		}
		last := probe(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s: %w", p.Name, limit, last)
		case <-time.After(interval):
		}
	}
}

// FreeAddrs returns n distinct 127.0.0.1 addresses whose ports were free a moment ago.
func FreeAddrs(n int) ([]string, error) {
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// ServerEnv is this process's environment with logging at info (no per-request log
// lines, as in production) and without the default admin server.
func ServerEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "LOG_LEVEL=") || strings.HasPrefix(kv, "START_STATS_SERVER=")
	})
	return append(env, "LOG_LEVEL=info", "START_STATS_SERVER=false")
}

// started is when the benchmark began, for progress lines.
var started = time.Now()

// Progress tells the user on stderr what is happening; stdout carries the report.
func Progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %4s %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, args...))
}

// LogTail reads the lines appended to a log file since it was opened.
type LogTail struct {
	f       *os.File
	partial []byte
}

// OpenTail opens path at its current end.
func OpenTail(path string) (*LogTail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return &LogTail{f: f}, nil
}

// Lines returns the complete lines appended since the last call.
func (t *LogTail) Lines() []string {
	b, _ := io.ReadAll(t.f)
	t.partial = append(t.partial, b...)
	i := bytes.LastIndexByte(t.partial, '\n')
	if i < 0 {
		return nil
	}
	lines := strings.Split(string(t.partial[:i]), "\n")
	t.partial = append([]byte(nil), t.partial[i+1:]...)
	return lines
}

// Close closes the file.
func (t *LogTail) Close() error { return t.f.Close() }
