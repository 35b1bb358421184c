package loader

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/pluginapi"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Executable is the gatehouse binary; empty means this process's executable.
	Executable string
	// File is the plugin file to open in the worker (the private copy), and Display
	// the name messages use.
	File, Display, Symbol string
	// Config is the step's config (JSON).
	Config []byte
	// MemoryLimit, if positive, is the most resident memory (bytes) the worker may
	// use: past it the worker is killed and started again.
	MemoryLimit int64
	// StartTimeout bounds opening the plugin and starting its service (default 10s).
	StartTimeout time.Duration
	Log          zerolog.Logger
}

// Worker runs one plugin step in a child process (the gatehouse binary re-executed as
// `gatehouse plugin __worker`), so that what Go cannot recover in-process (a panic on
// a goroutine the plugin started, allocation without bound) ends only the worker. The
// Worker restarts it with backoff and fails closed while it is down.
type Worker struct {
	o      WorkerOptions
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	enc     *gob.Encoder // nil while the worker is down
	pending map[uint64]chan workerResponse
	nextID  uint64
	down    error  // why the worker is down
	printed string // what the last worker that died printed, trimmed as a trial's output
}

// StartWorker starts the worker and waits until its service has started. An error is
// a plugin that cannot run (it names the file and what the worker printed).
func StartWorker(o WorkerOptions) (*Worker, error) {
	if o.Executable == "" {
		exe, err := selfExecutable()
		if err != nil {
			return nil, fmt.Errorf("worker: cannot find the gatehouse executable: %w", err)
		}
		o.Executable = exe
	}
	if o.Display == "" {
		o.Display = o.File
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultTrialTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Worker{o: o, ctx: ctx, cancel: cancel, pending: map[uint64]chan workerResponse{}}
	p, err := w.spawn()
	if err != nil {
		cancel()
		return nil, err
	}
	go w.supervise(p)
	return w, nil
}

// Up reports whether the worker is running now (it is restarted with backoff after it
// dies).
func (w *Worker) Up() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc != nil
}

// Printed is what the last worker process that died printed (its stderr and stdout:
// a panic's message and stack), trimmed and with the private copy's path replaced by
// the display name, as a trial load's output is; "" if none died. `gatehouse plugin
// test` shows it in the reason of the case that crashed the worker.
func (w *Worker) Printed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.printed
}

// Close stops the worker for good.
func (w *Worker) Close() { w.cancel() }

// Authorize sends req to the worker and waits for its answer or ctx. While the worker
// is down it fails at once (closed).
func (w *Worker) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	ch := make(chan workerResponse, 1)
	w.mu.Lock()
	if w.enc == nil {
		err := w.down
		w.mu.Unlock()
		return nil, fmt.Errorf("isolated worker of %s is down (%v); failing closed until it is restarted", w.o.Display, err)
	}
	w.nextID++
	id := w.nextID
	w.pending[id] = ch
	msg := workerRequest{ID: id, Req: *req, State: encodeState(req.State)}
	msg.Req.State = nil
	msg.Deadline, _ = ctx.Deadline()
	err := w.enc.Encode(msg)
	w.mu.Unlock()
	if err != nil {
		w.forget(id)
		return nil, fmt.Errorf("isolated worker of %s: sending the request: %w", w.o.Display, err)
	}
	select {
	case r := <-ch:
		if r.Err != "" {
			return nil, errors.New(r.Err)
		}
		if r.Resp == nil {
			return nil, errors.New("returned neither a response nor an error")
		}
		decodeState(r.State, req.State)
		return r.Resp, nil
	case <-ctx.Done():
		w.forget(id)
		return nil, ctx.Err()
	}
}

func (w *Worker) forget(id uint64) {
	w.mu.Lock()
	delete(w.pending, id)
	w.mu.Unlock()
}

// process is one run of the worker.
type process struct {
	cmd  *exec.Cmd
	conn *os.File
	dec  *gob.Decoder
	out  *tailBuffer
	oom  chan struct{} // closed when the memory watchdog killed it
	done chan struct{} // closed once the process has been waited for
}

// spawn starts a worker process and waits for its ready answer, then serves it.
func (w *Worker) spawn() (*process, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("worker: socket pair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "worker"), os.NewFile(uintptr(fds[1]), "worker-child")
	args := append(append([]string{}, WorkerArgs...), "--symbol", w.o.Symbol, "--conn-fd", "3")
	if w.o.MemoryLimit > 0 {
		args = append(args, "--memory-limit", strconv.FormatInt(w.o.MemoryLimit, 10))
	}
	cmd := exec.Command(w.o.Executable, append(args, w.o.File)...)
	p := &process{cmd: cmd, conn: parent, out: &tailBuffer{max: 4096}, oom: make(chan struct{}), done: make(chan struct{})}
	cmd.Stdin = bytesReader(w.o.Config)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		parent.Close()
		child.Close()
		return nil, fmt.Errorf("worker: cannot run %s: %w", w.o.Executable, err)
	}
	child.Close()
	p.dec = gob.NewDecoder(parent)
	ready := make(chan error, 1)
	go func() {
		var r workerResponse
		if err := p.dec.Decode(&r); err != nil {
			ready <- err
			return
		}
		if r.ID != 0 || r.Err != "" {
			ready <- errors.New(r.Err)
			return
		}
		ready <- nil
	}()
	t := time.NewTimer(w.o.StartTimeout)
	defer t.Stop()
	select {
	case err = <-ready:
	case <-t.C:
		err = fmt.Errorf("did not start within %s", w.o.StartTimeout)
	}
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		parent.Close()
		return nil, fmt.Errorf("worker: %s: %v; it printed: %s", w.o.Display, err, p.out.String())
	}
	w.mu.Lock()
	w.enc, w.down = gob.NewEncoder(parent), nil
	w.mu.Unlock()
	if w.o.MemoryLimit > 0 {
		go w.watchMemory(p)
	}
	return p, nil
}

// supervise serves p, and each worker started after it, until Close: when one dies,
// it fails what was pending, logs why, and starts another with backoff.
func (w *Worker) supervise(p *process) {
	const minBackoff, maxBackoff = 100 * time.Millisecond, 30 * time.Second
	backoff := minBackoff
	for {
		started := time.Now()
		pid := p.cmd.Process.Pid
		stop := context.AfterFunc(w.ctx, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
		w.serve(p)
		_ = syscall.Kill(-pid, syscall.SIGKILL) // its children too
		waitErr := p.cmd.Wait()
		close(p.done)
		stop()
		p.conn.Close()
		cause := fmt.Errorf("it exited: %v", waitErr)
		select {
		case <-p.oom:
			cause = fmt.Errorf("it used more than its memoryLimit of %d bytes and was killed", w.o.MemoryLimit)
		default:
		}
		printed := trimOutput(p.out.String(), strings.NewReplacer(w.o.File, w.o.Display))
		w.mu.Lock()
		w.printed = printed
		w.mu.Unlock()
		w.markDown(cause)
		if w.ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = minBackoff
		}
		w.o.Log.Error().Str("plugin", w.o.Display).Err(cause).Str("output", p.out.String()).Dur("restart_in", backoff).
			Msg("isolated plugin worker died; its steps fail closed until it is restarted")
		for {
			select {
			case <-w.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			np, err := w.spawn()
			if err == nil {
				p = np
				w.o.Log.Info().Str("plugin", w.o.Display).Msg("isolated plugin worker restarted")
				break
			}
			w.markDown(err)
			w.o.Log.Error().Str("plugin", w.o.Display).Err(err).Dur("restart_in", backoff).Msg("isolated plugin worker did not start again")
		}
	}
}

// serve hands each answer of p to the call waiting for it, until p's connection ends.
func (w *Worker) serve(p *process) {
	for {
		var r workerResponse
		if err := p.dec.Decode(&r); err != nil {
			return
		}
		w.mu.Lock()
		ch := w.pending[r.ID]
		delete(w.pending, r.ID)
		w.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// markDown fails every pending call with cause and the calls to come until a restart.
func (w *Worker) markDown(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.enc, w.down = nil, cause
	for id, ch := range w.pending {
		ch <- workerResponse{ID: id, Err: fmt.Sprintf("isolated worker of %s died (%v)", w.o.Display, cause)}
		delete(w.pending, id)
	}
}

// watchMemory kills p when its resident memory passes the limit.
func (w *Worker) watchMemory(p *process) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		if rss, ok := residentBytes(p.cmd.Process.Pid); ok && rss > w.o.MemoryLimit {
			close(p.oom)
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			return
		}
	}
}
