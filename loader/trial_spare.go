package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// TrialRequest is what a spare trial child (`gatehouse plugin __trial --request-stdin`)
// reads from its stdin: the file to trial-load and how.
type TrialRequest struct {
	Path       string `json:"path"`
	Symbol     string `json:"symbol"`
	Config     []byte `json:"config,omitempty"`
	WithConfig bool   `json:"withConfig,omitempty"`
}

// TrialSpare keeps one trial-load child started ahead of time: the gatehouse binary
// re-executed, past exec and package initialisation (tens of milliseconds of the ~80
// a trial took), waiting on its stdin for the file to open. A TrialRunner with a Spare
// hands it the next file; a Loader starts the next spare once it has opened the plugin
// (Refill; one spare waits at a time, and none before Start). Each
// child serves one trial, as a cold one does: a plugin cannot be unloaded, and one
// whose init code crashes or hangs takes only its child down. It is the same binary as
// the server, so the plugin is checked against the package hashes the server has.
//
// A spare is killed when the server dies (Pdeathsig, and it exits when its stdin
// closes), and Close kills it. Its zero value is ready; nothing is started until Start.
type TrialSpare struct {
	// Log reports spares that died while waiting.
	Log zerolog.Logger

	mu       sync.Mutex
	next     *spareChild // started and waiting, or nil
	starting bool
	closed   bool
	started  bool // Start was called: Refill may start the next spare
}

// spareChild is one started spare.
type spareChild struct {
	exe     string
	cmd     *exec.Cmd
	stdin   *os.File // the request goes here; closing it ends a waiting child
	result  *os.File // the child's result stream
	out     *bytes.Buffer
	done    chan struct{} // closed once the child was waited for
	waitErr error
}

// Start starts a spare for r's executable unless one is waiting or starting. It
// returns once the child runs (its package initialisation goes on in the child).
func (s *TrialSpare) Start(r TrialRunner) error {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return s.Refill(r)
}

// Refill starts the next spare, as Start does, once Start was called: a Loader calls
// it after each plugin it opened, and a spare is only kept where Start asked for one
// (extauth, once it watches the plugin folder).
func (s *TrialSpare) Refill(r TrialRunner) error {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil
	}
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = selfExecutable(); err != nil {
			return fmt.Errorf("trial spare: cannot find the gatehouse executable: %w", err)
		}
	}
	s.mu.Lock()
	if s.closed || s.starting || s.next != nil {
		s.mu.Unlock()
		return nil
	}
	s.starting = true
	s.mu.Unlock()
	c, err := startSpare(exe)
	s.mu.Lock()
	s.starting = false
	closed := s.closed
	if err == nil && !closed {
		s.next = c
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		return err
	case closed:
		c.stop()
	default:
		go s.watch(c)
	}
	return nil
}

// Close kills the waiting spare, if any, and starts no more.
func (s *TrialSpare) Close() {
	s.mu.Lock()
	c := s.next
	s.next, s.closed = nil, true
	s.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// Pid is the waiting spare's process id, or 0.
func (s *TrialSpare) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		return 0
	}
	return s.next.cmd.Process.Pid
}

// watch logs a spare that dies while it waits (it is reaped by its own waiter) and
// drops it, so the next trial starts a child instead of finding a dead one.
func (s *TrialSpare) watch(c *spareChild) {
	<-c.done
	s.mu.Lock()
	idle := s.next == c
	if idle {
		s.next = nil
	}
	closed := s.closed
	s.mu.Unlock()
	if idle && !closed {
		s.Log.Warn().Err(c.waitErr).Str("output", c.out.String()).
			Msg("the spare trial-load child died while waiting; the next plugin change starts one")
	}
}

// take returns the waiting spare of exe, or nil.
func (s *TrialSpare) take(exe string) *spareChild {
	s.mu.Lock()
	c := s.next
	s.next = nil
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	if c.exe != exe {
		c.stop()
		return nil
	}
	return c
}

// run trial-loads req in the waiting spare. ok is false when there was none, or it
// died before it began opening the file (no plugin code ran): the caller then starts
// a child. It starts no new spare: Start does, once whatever the trial was for is done
// (the Loader calls it after the server opened the plugin), so that the new spare's
// start-up does not compete with the swap for the CPU.
func (s *TrialSpare) run(ctx context.Context, exe string, timeout time.Duration, display string, req TrialRequest) (fs []Finding, res *TrialResult, ok bool) {
	c := s.take(exe)
	if c == nil {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, c.kill)
	defer stop()
	err := json.NewEncoder(c.stdin).Encode(req)
	c.stdin.Close()
	if err != nil {
		c.stop()
		return nil, nil, false
	}
	t := readTrial(c.result)
	if t.decodeErr != nil && !t.opening && ctx.Err() == nil {
		c.stop()
		s.Log.Warn().Err(c.waitErr).Str("output", c.out.String()).
			Msg("the spare trial-load child ended before it opened the plugin; starting a child for this trial instead")
		return nil, nil, false
	}
	<-c.done
	c.kill() // nothing the plugin started outlives its trial
	c.result.Close()
	t.waitErr = c.waitErr
	fs, res = t.report(ctx, exe, timeout, display, req.Path, c.out.String())
	return fs, res, true
}

// kill kills the child's process group: the child and whatever the plugin started.
func (c *spareChild) kill() { _ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) }

// stop kills the child and waits until it was reaped.
func (c *spareChild) stop() {
	c.stdin.Close()
	c.kill()
	<-c.done
	c.result.Close()
}

// startSpare starts a spare child of exe. The child reads its request from a pipe
// (its stdin) and writes its results to another (fd 3), as a cold one does.
func startSpare(exe string) (*spareChild, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("trial spare: pipe: %w", err)
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("trial spare: pipe: %w", err)
	}
	args := append(append([]string{}, TrialArgs...), "--request-stdin", "--result-fd", "3")
	c := &spareChild{exe: exe, cmd: exec.Command(exe, args...), stdin: inW, result: resR, out: &bytes.Buffer{}, done: make(chan struct{})}
	c.cmd.Stdin = inR
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.ExtraFiles = []*os.File{resW}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.cmd.WaitDelay = time.Second
	err = spawn(c.cmd)
	inR.Close()
	resW.Close()
	if err != nil {
		inW.Close()
		resR.Close()
		return nil, fmt.Errorf("trial spare: cannot run %s: %w", exe, err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// spawner starts spare children from one goroutine locked to its OS thread for the
// life of the process. Pdeathsig is sent when the thread that started the child ends,
// not the process: Go ends a thread when a goroutine locked to it returns, so a spare
// started from an ordinary goroutine could be killed while it waits, long after it
// started. This thread never ends.
var spawner = struct {
	once sync.Once
	reqs chan spawnRequest
}{reqs: make(chan spawnRequest)}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func spawn(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: see spawner
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
