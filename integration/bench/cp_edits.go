package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
)

// editSeries measures one kind of edit: the file rewritten, its new version on the
// already-connected stream of the role it concerns.
type editSeries struct {
	Kind      cpKind
	Latencies xdsbench.Latencies
	// Publish is the control plane's mean time in Publish per edit (both roles), from
	// its gatehouse_xds_publish_seconds histogram.
	Publish time.Duration
	// CPU is the control plane's CPU time (user + system) per edit: what an edit costs
	// it however busy the machine is.
	CPU time.Duration
	// OtherCPU is the share of the machine's CPU used by processes other than the
	// control plane and the bench while the edits ran.
	OtherCPU float64
}

// editor makes edits to the resources of a running control plane; v numbers them so
// that every edit changes its resource.
type editor struct {
	dir string
	n   int
	cp  *controlplaneProc
	v   int
}

// target is where the edit of service i's resource of kind k shows: the watcher, the
// type and the resource whose version changes.
func (e *editor) target(k cpKind, i int) (*xdsbench.Watcher, string, string) {
	switch k {
	case kindAuthConfig:
		return e.cp.extauth, xds.ExtAuthConfigType, k.id(i)
	case kindUpstream:
		return e.cp.proxy, xds.EndpointType, translate.ClusterName(k.id(i))
	default:
		return e.cp.proxy, xds.RouteType, e.cp.routeConfig
	}
}

// service is the service the j-th edit of a series touches, spread over all of them.
func (e *editor) service(j int) int { return (j*7919 + 13) % e.n }

// measure makes count edits of kind k one after the other, each timed from just before
// the file is rewritten to its new version arriving.
func (e *editor) measure(ctx context.Context, k cpKind, count int, clock cpuClock) (editSeries, error) {
	s := editSeries{Kind: k}
	before, err := e.publishMetrics(ctx)
	if err != nil {
		return s, err
	}
	pid := e.cp.proc.cmd.Process.Pid
	cpu, err := startCPUWatch(clock, pid, os.Getpid())
	if err != nil {
		return s, err
	}
	cpBefore, err := clock.used(pid)
	if err != nil {
		return s, err
	}
	for j := range count {
		i := e.service(j)
		w, typ, name := e.target(k, i)
		e.v++
		v := e.v
		l, err := xdsbench.MeasureOne(ctx, w, j, xdsbench.Edit{
			Resource: func(int) (string, string) { return typ, name },
			Apply:    func(int) error { return editResource(e.dir, k, i, v) },
		}, 30*time.Second)
		if err != nil {
			if exit := e.cp.proc.exited(); exit != nil {
				return s, exit
			}
			return s, fmt.Errorf("%s edit: %w", k, err)
		}
		s.Latencies = append(s.Latencies, l)
	}
	if s.OtherCPU, err = cpu.others(); err != nil {
		return s, err
	}
	cpAfter, err := clock.used(pid)
	if err != nil {
		return s, err
	}
	s.CPU = (cpAfter - cpBefore) / time.Duration(count)
	after, err := e.publishMetrics(ctx)
	if err != nil {
		return s, err
	}
	sum := after["gatehouse_xds_publish_seconds_sum"] - before["gatehouse_xds_publish_seconds_sum"]
	s.Publish = time.Duration(sum / float64(count) * float64(time.Second))
	return s, nil
}

func (e *editor) publishMetrics(ctx context.Context) (map[string]float64, error) {
	return metric(ctx, "http://"+e.cp.admin+"/metrics", "gatehouse_xds_publish_seconds_sum", "gatehouse_xds_publish_seconds_count")
}

// cpuWatch measures how much of the machine other processes use over a stretch.
type cpuWatch struct {
	clock cpuClock
	pids  []int
	start time.Time
	busy  time.Duration // machine busy at start, minus pids' CPU
}

func startCPUWatch(clock cpuClock, pids ...int) (*cpuWatch, error) {
	w := &cpuWatch{clock: clock, pids: pids, start: time.Now()}
	var err error
	w.busy, err = w.othersBusy()
	return w, err
}

func (w *cpuWatch) othersBusy() (time.Duration, error) {
	busy, err := w.clock.machineBusy()
	if err != nil {
		return 0, err
	}
	for _, pid := range w.pids {
		used, err := w.clock.used(pid)
		if err != nil {
			return 0, err
		}
		busy -= used
	}
	return busy, nil
}

// others is the share of all CPUs other processes used since the start.
func (w *cpuWatch) others() (float64, error) { return w.othersBut(0) }

// othersBut is others less cpu, the time of a process started after the watch.
func (w *cpuWatch) othersBut(cpu time.Duration) (float64, error) {
	busy, err := w.othersBusy()
	if err != nil {
		return 0, err
	}
	wall := time.Since(w.start) * time.Duration(runtime.NumCPU())
	return max(0, float64(busy-w.busy-cpu)/float64(wall)), nil
}
