package churnkit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Options size a run.
type Options struct {
	Routes   int           // routes written before the run starts
	Duration time.Duration // over which the changes are spread and the load runs
	Rate     int           // steady requests a second, over the routes that exist
	Workers  int           // steady requests in flight at most
	// New secured routes (VirtualService and AuthConfig written together), AuthConfig
	// edits that change the allowed key, and route removals, in a shuffled order.
	New, Edits, Deletes int
	SwapPlugin          bool // a new SwapPlugin build replaces the one serving, at a fifth of the run
	KillControlPlane    bool // SIGKILL and restart of the control plane, at two fifths
	// QuietRestart holds the changes from the SIGKILL until the restarted control
	// plane's first run is published: the routes of an AuthConfig written meanwhile
	// may be denied by a replica that reconnects after the proxies (a known limit,
	// docs/controlplane.md), which a test that counts wrong answers leaves out.
	QuietRestart   bool
	RestartExtauth int // replicas restarted one after the other, from three fifths on
	PollEvery      time.Duration
	// PollTail is how long a change's poller goes on after the first new answer, so a
	// replica still giving the old one shows up as wrong answers.
	PollTail time.Duration
	Seed     uint64
	// Warmup is how long the steady load runs before the first change and the
	// disturbances' clock start; the steady load runs Warmup longer.
	Warmup time.Duration
	// ProfileDir, when set, receives CPU profiles of every server over the run's first
	// fifth, before any disturbance begins (System.Profile).
	ProfileDir string
}

// Event is a disturbance of the run, from its start to when it was done.
type Event struct {
	Name       string
	Start, End time.Time
}

// Run is what a run did and saw, and its verdict.
type Run struct {
	Options
	Start, End time.Time
	Changes    []Change
	Records    []Record
	Events     []Event
	Unsent     int // steady requests not sent because every worker was busy
	Verdict    Verdict
}

// Do runs the workload on s and judges it. An error means the run could not be made
// (a process died or would not start), not that answers were wrong.
func Do(ctx context.Context, s *System, o Options) (*Run, error) {
	if o.Edits+o.Deletes > o.Routes/2 {
		return nil, fmt.Errorf("churn: %d edits and %d deletions need distinct routes of the first half of %d", o.Edits, o.Deletes, o.Routes)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	rs := newRoutes(s.Dir, o.Routes)
	c := newClient(s.gateway, s.key.token)
	direct := s.direct
	var rec recorder
	run := &Run{Options: o, Start: time.Now()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// disturbing counts the disturbances not over yet: the steady load outlasts them, so
	// a replica restarted late is still sent Checks to return to the rotation with.
	var disturbing atomic.Int32
	unsent := steady(ctx, &wg, c, rs, &rec, o, func() bool { return disturbing.Load() > 0 })
	// The changes meet a load that is steady already: connections open and warm.
	select {
	case <-ctx.Done():
	case <-time.After(o.Warmup):
	}

	// Edits and deletions touch distinct routes other than the JWT route; edits only
	// secured ones.
	perm := rng.Perm(o.Routes)
	var editable, deletable []int
	for _, i := range perm {
		switch {
		case i == 1:
		case Initial(i).Kind == Secured && len(editable) < o.Edits:
			editable = append(editable, i)
		case len(deletable) < o.Deletes:
			deletable = append(deletable, i)
		}
	}
	type job struct {
		what  string
		route int
	}
	var jobs []job
	for k := range o.New {
		jobs = append(jobs, job{"new", o.Routes + k})
	}
	for _, i := range editable {
		jobs = append(jobs, job{"edit", i})
	}
	for _, i := range deletable {
		jobs = append(jobs, job{"delete", i})
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	var evMu sync.Mutex
	var restarting sync.RWMutex // held by a quiet restart
	var failed error
	disturb := func(at float64, name string, f func() error) {
		disturbing.Add(1)
		wg.Go(func() {
			defer disturbing.Add(-1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(at * float64(o.Duration))):
			}
			e := Event{Name: name, Start: time.Now()}
			err := f()
			e.End = time.Now()
			evMu.Lock()
			defer evMu.Unlock()
			run.Events = append(run.Events, e)
			if err != nil && failed == nil {
				failed = fmt.Errorf("%s: %w", name, err)
				cancel()
			}
			benchkit.Progress("churn: %s took %s", name, e.End.Sub(e.Start).Round(time.Millisecond))
		})
	}
	if o.ProfileDir != "" {
		wg.Go(func() {
			if err := s.Profile(ctx, o.ProfileDir, max(o.Duration/5, time.Second)); err != nil {
				benchkit.Progress("churn: %v", err)
				return
			}
			benchkit.Progress("churn: CPU profiles of the first fifth in %s", o.ProfileDir)
		})
	}
	if o.SwapPlugin {
		disturb(0.2, "new "+SwapPlugin+".so", s.SwapPlugin)
	}
	if o.KillControlPlane {
		disturb(0.4, "control plane SIGKILL and restart (until its first run is published)", func() error {
			if o.QuietRestart {
				restarting.Lock()
				defer restarting.Unlock()
			}
			return s.KillControlPlane(ctx)
		})
	}
	if o.RestartExtauth > 0 {
		disturb(0.6, "rolling restart of extauth", func() error {
			for i := range o.RestartExtauth {
				if err := s.RestartExtauth(ctx, i); err != nil {
					return fmt.Errorf("replica %d: %w", i, err)
				}
			}
			return nil
		})
	}

	// The changes, evenly spread over the run, each with its poller.
	gap := o.Duration / time.Duration(len(jobs)+1)
	tick := time.NewTicker(gap)
	for _, j := range jobs {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if ctx.Err() != nil {
			break
		}
		to := State{Kind: Absent}
		switch j.what {
		case "new":
			to = State{Kind: Secured, V: 1}
		case "edit":
			to = State{Kind: Secured, V: rs.get(j.route).V + 1}
		}
		restarting.RLock()
		ch, err := rs.change(j.route, j.what, to)
		restarting.RUnlock()
		if err != nil {
			tick.Stop()
			cancel()
			wg.Wait()
			return nil, err
		}
		wg.Go(func() { poll(ctx, c, direct, ch, &rec, o) })
	}
	tick.Stop()
	select {
	case <-ctx.Done():
	case <-time.After(gap):
	}
	// Every poller ends by itself once its change showed (or settle passed); the
	// disturbances end when done.
	waitPollers := make(chan struct{})
	go func() {
		for s.Alive() == nil && ctx.Err() == nil {
			select {
			case <-waitPollers:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err := s.Alive(); err != nil {
			evMu.Lock()
			if failed == nil {
				failed = err
			}
			evMu.Unlock()
		}
		cancel()
	}()
	wg.Wait()
	close(waitPollers)
	run.End = time.Now()
	if failed != nil {
		return nil, failed
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	run.Unsent = int(unsent.Load())
	run.Changes, run.Records = rs.all(), rec.all()
	run.Verdict = Judge(before(o.Routes), run.Changes, run.Records)
	return run, nil
}

// steady sends o.Rate requests a second to routes that exist, at random, from
// o.Workers workers, for o.Duration and as long as busy says (ctx ends it early).
func steady(ctx context.Context, wg *sync.WaitGroup, c *client, rs *routes, rec *recorder, o Options, busy func() bool) *atomic.Int64 {
	var unsent atomic.Int64
	work := make(chan struct{}, o.Workers)
	for k := range o.Workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(o.Seed, uint64(k)+2))
			for range work {
				i, st := rs.pick(rng)
				r := c.do(context.WithoutCancel(ctx), i, steadyReq(rng, st))
				rec.add(r)
			}
		})
	}
	wg.Go(func() {
		defer close(work)
		start := time.Now()
		sent := 0
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for time.Since(start) < o.Warmup+o.Duration || busy() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for due := int(time.Since(start).Seconds() * float64(o.Rate)); sent < due; sent++ {
				select {
				case work <- struct{}{}:
				default:
					unsent.Add(1)
				}
			}
		}
	})
	return &unsent
}

// poll sends ch's telling requests in turn, every o.PollEvery, from its files written
// until o.PollTail after the first answer only its new state gives (or settle). For an
// AuthConfig edit, it also sends each extauth replica the Check straight, until each
// gave the new answer; not while a replica is out of the gateway's rotation, and the
// first Check after it is back is marked Returned.
func poll(ctx context.Context, c *client, direct *replicas, ch Change, rec *recorder, o Options) {
	reqs := telling(ch)
	if len(reqs) == 0 {
		return
	}
	isNew := func(r Record) bool {
		return r.Err == "" && r.Status == ch.To.Answer(r.Req) && r.Status != ch.From.Answer(r.Req)
	}
	run, ctx := ctx, context.WithoutCancel(ctx) // requests in flight finish when run ends
	limit := time.Now().Add(settle)
	var seen time.Time
	pending, wasOut := map[int]bool{}, map[int]bool{}
	if ch.What == "edit" {
		for k := range direct.clients {
			pending[k] = true
		}
	}
	for k := 0; run.Err() == nil && (time.Now().Before(limit) || len(pending) > 0 && time.Now().Before(seen.Add(settle))); k++ {
		q := reqs[k%len(reqs)]
		if time.Now().Before(limit) {
			r := c.do(ctx, ch.Route, q)
			r.Poll = true
			rec.add(r)
			if seen.IsZero() && isNew(r) {
				seen = r.Recv
				limit = seen.Add(o.PollTail)
			}
		}
		for replica := range pending {
			if direct.out[replica].Load() {
				wasOut[replica] = true
				continue
			}
			r := direct.check(ctx, replica, ch.Route, q)
			if r.Err == "" && wasOut[replica] {
				r.Returned, wasOut[replica] = true, false
			}
			rec.add(r)
			if isNew(r) {
				delete(pending, replica)
			}
		}
		time.Sleep(o.PollEvery)
	}
}
