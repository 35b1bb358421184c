package pluginload

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	// was seen if that came first: gatehouse waits for the child before it logs that.
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
// change and /proc for the child process gatehouse starts for the trial load. Only
// its own goroutine writes seen; stop reads it after that goroutine is done.
type observer struct {
	pid   int
	log   *benchkit.LogTail
	known map[int]bool // pids already looked at
	child int          // the trial-load child: 0 until seen, -1 once seen gone
	// spare is gatehouse's spare trial-load child (loader.TrialSpare) waiting at the
	// rename, or 0, and spareRead the bytes it had read: it starts the trial when it
	// reads the request on its stdin.
	spare     int
	spareRead int64
	t0        time.Time
	quit      chan struct{}
	done      chan struct{} // closed once the change is over or quit is closed
	seen      observed
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
	o := &observer{pid: pid, log: f, known: map[int]bool{}, quit: make(chan struct{}), done: make(chan struct{})}
	for _, p := range all {
		o.known[p] = true
		if st, err := benchkit.ReadProcStat(p); err == nil && st.PPID == pid && trialArgs(p) == "spare" {
			o.spare, o.spareRead = p, readChars(p)
		}
	}
	return o, nil
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
	if err == nil {
		if io, err := p.IO(); err == nil {
			return int64(io.RChar)
		}
	}
	return -1
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
		if o.over() {
			return
		}
		select {
		case <-o.quit:
			return
		case <-tick.C:
		}
	}
}

// over reports whether the change was accepted or rejected and the trial-load child,
// if seen, was seen gone.
func (o *observer) over() bool {
	return (o.seen.Accepted != 0 || o.seen.rejected != "") && (o.child == 0 || o.seen.TrialEnd != 0)
}

// wait returns what was seen once the change is over, or when ctx ends.
func (o *observer) wait(ctx context.Context) observed {
	select {
	case <-o.done:
	case <-ctx.Done():
	}
	return o.stop()
}

// stop ends the watch and returns what was seen.
func (o *observer) stop() observed {
	close(o.quit)
	<-o.done
	o.log.Close()
	return o.seen
}

func (o *observer) scanChildren() {
	switch {
	case o.child < 0: // seen and gone
	case o.child > 0:
		if st, err := benchkit.ReadProcStat(o.child); err != nil || st.State == "Z" || st.PPID != o.pid {
			o.child = -1
			o.seen.TrialEnd = o.since()
		}
	case o.spare != 0 && readChars(o.spare) != o.spareRead:
		// A spare that read its request (or died) is the trial's child from then on.
		o.child = o.spare
		o.seen.TrialStart = o.since()
	default:
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
			// A child forked but not yet running the trial (its command line is still
			// gatehouse's) is looked at again next time; a spare is for the next change.
			if kind := trialArgs(p); kind != "" {
				o.known[p] = true
				if kind == "trial" {
					o.child = p
					o.seen.TrialStart = o.since()
					return
				}
			}
		}
	}
}

func (o *observer) readLog() {
	for _, l := range o.log.Lines() {
		var ev struct {
			Message  string `json:"message"`
			ConfigID string `json:"config_id"`
			Error    string `json:"error"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		at := o.since()
		switch {
		case ev.Message == msgChanged:
			o.seen.Detected = at
		case ev.Message == msgAccepted && ev.ConfigID == loadConfigID:
			o.seen.Accepted = at
			if o.seen.TrialStart != 0 && o.seen.TrialEnd == 0 {
				o.seen.TrialEnd = at
				o.child = -1
			}
		case ev.Message == msgRejected && ev.ConfigID == loadConfigID:
			o.seen.rejected = ev.Error
		}
	}
}
