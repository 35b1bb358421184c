package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// command is exec.CommandContext with the child in its own process group: when ctx
// ends, the group (the child and whatever it started, such as the test binary `go
// test` runs) gets SIGTERM, then SIGKILL after a grace period.
func command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// output runs a command to completion and returns its stdout; on failure the error
// carries stderr.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	out, _, err := outputCPU(ctx, dir, name, args...)
	return out, err
}

// outputCPU is output that also returns the CPU time (user and system) the command used.
func outputCPU(ctx context.Context, dir, name string, args ...string) (string, time.Duration, error) {
	cmd := command(ctx, dir, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return stdout.String(), cpu, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(stderr.String(), 40))
	}
	return stdout.String(), cpu, nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proc is a long-running child: a server under test.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // file with the child's stdout and stderr
	done chan struct{}
	err  error // set when done is closed
}

// procSet stops, by pid, every proc it started.
type procSet struct {
	mu    sync.Mutex
	procs []*proc
}

// start runs bin with args, its output going to logPath.
func (s *procSet) start(name, logPath string, env []string, bin string, args ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return p, nil
}

// stopAll sends SIGTERM to each proc's group, waits up to five seconds and then
// kills what is left. It may be called more than once.
func (s *procSet) stopAll() {
	s.mu.Lock()
	procs := s.procs
	s.procs = nil
	s.mu.Unlock()
	stopProcs(procs)
}

// stop stops p alone, as stopAll would, and forgets it.
func (s *procSet) stop(p *proc) {
	s.mu.Lock()
	s.procs = slices.DeleteFunc(s.procs, func(q *proc) bool { return q == p })
	s.mu.Unlock()
	stopProcs([]*proc{p})
}

func stopProcs(procs []*proc) {
	for _, p := range procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
}

// exited reports whether p has stopped, and why, with the end of its log.
func (p *proc) exited() error {
	select {
	case <-p.done:
		b, _ := os.ReadFile(p.log)
		return fmt.Errorf("%s exited (%v); its log ends:\n%s", p.name, p.err, tail(string(b), 30))
	default:
		return nil
	}
}
