package pluginload

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// observeEvery is how often the observer looks at gatehouse's log and at /proc.
const observeEvery = 2 * time.Millisecond

// Log messages of a plugin change (loader/watch.go, server/registry.go).
const (
	msgChanged  = "plugin files appeared or changed"
	msgAccepted = "auth config accepted"
	msgRejected = "auth config rejected"
)

// observed is what happened in gatehouse after a rename, as offsets from it; zero when
// not seen. The log's own timestamps are whole seconds, so a line counts from when it
// appeared in the log file.
type observed struct {
	Detected   time.Duration // msgChanged: the folder settled (100ms) and was hashed
	Accepted   time.Duration // msgAccepted for loadConfigID: pre-flight, trial load, plugin.Open and the chain built
	TrialStart time.Duration // gatehouse's child process, the trial load, first seen in /proc
	// TrialEnd is when the child was first seen gone (or a zombie), or when Accepted
	// was seen if that came first: gatehouse waits for the child before it goes on, so
	// the log line proves the child gone. (The observer shares two CPUs with gatehouse
	// and its child; a scan can come late.)
	TrialEnd time.Duration
	rejected string // the error of msgRejected, if logged
}

// trial is how long the trial-load child lived, or 0 when it was not seen.
func (o observed) trial() time.Duration {
	if o.TrialStart == 0 || o.TrialEnd == 0 {
		return 0
	}
	return o.TrialEnd - o.TrialStart
}

func (o observed) summary() string {
	return fmt.Sprintf("seen: changed %s, trial-load child %s–%s, accepted %s", o.Detected, o.TrialStart, o.TrialEnd, o.Accepted)
}

// observer follows, every observeEvery, gatehouse's log for the lines of a plugin
// change and /proc for the child process gatehouse starts for the trial load.
type observer struct {
	pid   int
	log   *benchkit.LogTail
	known map[int]bool // pids already looked at
	child int
	// spare is gatehouse's spare trial-load child (loader.TrialSpare) waiting at the
	// rename, or 0, and spareRead the bytes it had read: it starts the trial when it
	// reads the request on its stdin.
	spare     int
	spareRead int64
	t0        time.Time
	quit      chan struct{}
	done      chan struct{}

	mu       sync.Mutex
	seen     observed
	complete chan struct{} // closed once the change was accepted or rejected and the child is gone
}

// newObserver prepares to watch gatehouse pid, whose log is logPath, from the log's
// current end.
func newObserver(pid int, logPath string) (*observer, error) {
	f, err := benchkit.OpenTail(logPath)
	if err != nil {
		return nil, err
	}
	all, err := benchkit.Pids()
	if err != nil {
		f.Close()
		return nil, err
	}
	o := &observer{pid: pid, log: f, known: map[int]bool{}, quit: make(chan struct{}), done: make(chan struct{}), complete: make(chan struct{})}
	for _, p := range all {
		o.known[p] = true
		if isSpare(p, pid) {
			o.spare, o.spareRead = p, readChars(p)
		}
	}
	return o, nil
}

// isSpare reports whether pid is a spare trial-load child of parent, waiting for the
// file it is to open.
func isSpare(pid, parent int) bool {
	st, err := benchkit.ReadProcStat(pid)
	return err == nil && st.PPID == parent && trialArgs(pid) == "spare"
}

// trialArgs is "spare" for `gatehouse plugin __trial --request-stdin` (a spare started
// ahead of time, loader.TrialSpare), "trial" for any other `plugin __trial`, and ""
// for anything else, such as a child forked that has not run its program yet.
func trialArgs(pid int) string {
	p, err := procfs.NewProc(pid)
	var args []string
	if err == nil {
		args, err = p.CmdLine()
	}
	switch {
	case err != nil || len(args) < 2 || !slices.Contains(args[1:], "__trial"):
		return ""
	case slices.ContainsFunc(args[1:], func(a string) bool { return strings.HasPrefix(a, "--request-stdin") }):
		return "spare"
	}
	return "trial"
}

// readChars is the rchar of /proc/<pid>/io (bytes the process read), or -1 when it is
// gone.
func readChars(pid int) int64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return -1
	}
	io, err := p.IO()
	if err != nil {
		return -1
	}
	return int64(io.RChar)
}

// start sets the time offsets count from and starts watching.
func (o *observer) start() {
	o.t0 = time.Now()
	go o.run()
}

func (o *observer) since() time.Duration { return time.Since(o.t0) }

func (o *observer) run() {
	defer close(o.done)
	tick := time.NewTicker(observeEvery)
	defer tick.Stop()
	for {
		o.scanChildren()
		o.readLog()
		select {
		case <-o.quit:
			return
		case <-tick.C:
		}
	}
}

// wait returns what was seen once the change completed, or when ctx ends.
func (o *observer) wait(ctx context.Context) observed {
	select {
	case <-o.complete:
	case <-ctx.Done():
	}
	return o.stop()
}

// stop ends the watch and returns what was seen.
func (o *observer) stop() observed {
	close(o.quit)
	<-o.done
	o.log.Close()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen
}

func (o *observer) scanChildren() {
	switch {
	case o.child < 0: // seen and gone
		return
	case o.child == 0:
		// A spare that read its request (or died) is the trial's child from then on.
		if o.spare != 0 && readChars(o.spare) != o.spareRead {
			o.child = o.spare
			o.record(func(s *observed) { s.TrialStart = o.since() })
			return
		}
		all, err := benchkit.Pids()
		if err != nil {
			return
		}
		for _, p := range all {
			if o.known[p] {
				continue
			}
			st, err := benchkit.ReadProcStat(p)
			if err != nil || st.PPID != o.pid || st.State == "Z" {
				o.known[p] = true
				continue
			}
			switch trialArgs(p) {
			case "":
				// Forked but not yet running the trial (its command line is still
				// gatehouse's): looked at again next time.
			case "spare":
				o.known[p] = true // the spare started for the next change
			default:
				o.known[p] = true
				o.child = p
				o.record(func(s *observed) { s.TrialStart = o.since() })
				return
			}
		}
	default:
		if st, err := benchkit.ReadProcStat(o.child); err != nil || st.State == "Z" || st.PPID != o.pid {
			o.child = -1
			o.record(func(s *observed) { s.TrialEnd = o.since() })
		}
	}
}

func (o *observer) readLog() {
	for _, l := range o.log.Lines() {
		o.line([]byte(l))
	}
}

func (o *observer) line(b []byte) {
	var ev struct {
		Message  string `json:"message"`
		ConfigID string `json:"config_id"`
		Error    string `json:"error"`
	}
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	at := o.since()
	switch {
	case ev.Message == msgChanged:
		o.record(func(s *observed) { s.Detected = at })
	case ev.Message == msgAccepted && ev.ConfigID == loadConfigID:
		o.record(func(s *observed) {
			s.Accepted = at
			if s.TrialStart != 0 && s.TrialEnd == 0 {
				s.TrialEnd = at
				o.child = -1
			}
		})
	case ev.Message == msgRejected && ev.ConfigID == loadConfigID:
		o.record(func(s *observed) { s.rejected = ev.Error })
	}
}

// record updates what was seen under the lock and closes complete when the change is over.
func (o *observer) record(f func(*observed)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(&o.seen)
	over := o.seen.Accepted != 0 || o.seen.rejected != ""
	if over && o.child != 0 && o.seen.TrialEnd == 0 {
		over = false // the child was seen and has not been seen gone yet
	}
	if over {
		select {
		case <-o.complete:
		default:
			close(o.complete)
		}
	}
}
