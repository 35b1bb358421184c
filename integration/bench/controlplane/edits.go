package controlplane

import (
	"context"
	"fmt"
	"os"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// EditSeries measures one kind of edit: the file rewritten, its new version on the
// already-connected stream of the role it concerns.
type EditSeries struct {
	Kind      Kind
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

// publishSeconds is the control plane's metric of its time in xds.Server.Publish so far.
const publishSeconds = "gatehouse_xds_publish_seconds_sum"

// Editor makes edits to the resources of a running control plane; v numbers them so
// that every edit changes its resource.
type Editor struct {
	Dir string // the resources' folder, as WriteResources filled it
	N   int    // services in it
	CP  *Plane // the control plane serving them
	v   int
}

// target is where the edit of service i's resource of kind k shows: the watcher, the
// type and the resource whose version changes.
func (e *Editor) target(k Kind, i int) (*xdsbench.Watcher, string, string) {
	typ, name := k.Watched(i, e.CP.routeConfig)
	if k == KindAuthConfig {
		return e.CP.extauth, typ, name
	}
	return e.CP.proxy, typ, name
}

// service is the service the j-th edit of a series touches, spread over all of them.
func (e *Editor) service(j int) int { return (j*7919 + 13) % e.N }

// Measure makes count edits of kind k one after the other, each timed from just before
// the file is rewritten to its new version arriving.
func (e *Editor) Measure(ctx context.Context, k Kind, count int) (EditSeries, error) {
	s := EditSeries{Kind: k}
	before, err := e.CP.metric(ctx, publishSeconds)
	if err != nil {
		return s, err
	}
	pid := e.CP.Proc.Pid()
	cpu, err := benchkit.WatchOthers(pid, os.Getpid())
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
			Apply:    func(int) error { return EditResource(e.Dir, k, i, v) },
		}, 30*time.Second)
		if err != nil {
			if exit := e.CP.Proc.Exited(); exit != nil {
				return s, exit
			}
			return s, fmt.Errorf("%s edit: %w", k, err)
		}
		s.Latencies = append(s.Latencies, l)
	}
	others, used, err := cpu.Since(0)
	if err != nil {
		return s, err
	}
	s.OtherCPU, s.CPU = others, used[0]/time.Duration(count)
	after, err := e.CP.metric(ctx, publishSeconds)
	if err != nil {
		return s, err
	}
	s.Publish = time.Duration((after - before) / float64(count) * float64(time.Second))
	return s, nil
}
