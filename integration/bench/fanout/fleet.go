package fanout

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// kinds are the kinds edited, in the order each round edits them.
var kinds = []string{"AuthConfig", "Upstream", "VirtualService", routesUndecoded, routesVHDS}

// routesUndecoded is VirtualService edits timed with proxies that do not decode the
// route configuration: the control plane's part, without 100 proxies' decoding on one
// core of the bench.
const routesUndecoded = "VirtualService (proxies not decoding)"

// routesVHDS is VirtualService edits with Settings spec.virtualHostDiscovery on: each
// virtual host is a resource of its own, and an edit sends that one.
const routesVHDS = "VirtualService over VHDS"

// joinBatch is how many clients connect at once while a fleet grows.
const joinBatch = 50

// fleetResult is one fleet size's figures.
type fleetResult struct {
	Clients int
	Load    string        // load average after the edits
	Ready   time.Duration // from connecting the clients added (in batches of joinBatch) to every client's complete state
	RSS     int64         // the control plane's, with the fleet connected and settled
	Heap    int64         // its live Go heap then (after two collections)
	Edits   []editSeries
}

// editSeries is the edits of one kind.
type editSeries struct {
	Kind  string
	Last  []time.Duration // edit written → the last client holding it
	Bytes []int64         // resource bytes every client received for the edit
	CPU   time.Duration   // the control plane's CPU per edit
}

// measureFleet grows the fleet to n clients and times edits of each kind.
func measureFleet(ctx context.Context, p *plane, n int, o Options, version *int) (fleetResult, error) {
	f := fleetResult{Clients: n}
	start := time.Now()
	// Clients join in batches, as replicas of a rollout do; each batch gets its whole
	// state before the next connects.
	var at []time.Time
	for len(p.proxies)+len(p.extauths) < n {
		proxies := min(n/2-len(p.proxies), joinBatch/2)
		extauths := min(n-n/2-len(p.extauths), joinBatch-proxies)
		if err := p.connect(ctx, proxies, extauths); err != nil {
			return f, err
		}
		var err error
		if at, err = p.waitComplete(ctx, 5*time.Minute); err != nil {
			return f, err
		}
	}
	f.Ready = slices.MaxFunc(at, time.Time.Compare).Sub(start)
	time.Sleep(3 * time.Second) // the collector returns the connections' garbage
	var err error
	if f.Heap, err = liveHeap(ctx, p); err != nil {
		return f, err
	}
	if f.RSS, err = benchkit.RSS(p.proc.Pid()); err != nil {
		return f, err
	}
	for _, kind := range kinds {
		if kind == routesVHDS && n != o.Clients[len(o.Clients)-1] {
			// Only with the largest fleet: turning VHDS on sends every proxy every virtual
			// host at once, garbage that would stay in the next fleets' RSS.
			continue
		}
		s := editSeries{Kind: kind}
		edits := o.Edits
		if kind == "VirtualService" || kind == routesUndecoded || kind == routesVHDS {
			edits = o.RouteEdits
		}
		if kind == routesVHDS {
			if err := p.vhds(ctx, true); err != nil {
				return f, err
			}
		}
		for _, c := range p.proxies {
			c.DecodeRoutes(kind != routesUndecoded)
		}
		cpu0, err := benchkit.CPUUsed(p.proc.Pid())
		if err != nil {
			return f, err
		}
		for i := range edits {
			*version++
			last, bytes, err := timeEdit(ctx, p, kind, i%p.n, *version)
			if err != nil {
				return f, err
			}
			s.Last, s.Bytes = append(s.Last, last), append(s.Bytes, bytes)
		}
		cpu1, err := benchkit.CPUUsed(p.proc.Pid())
		if err != nil {
			return f, err
		}
		s.CPU = (cpu1 - cpu0) / time.Duration(edits)
		f.Edits = append(f.Edits, s)
		if kind == routesVHDS {
			if err := p.vhds(ctx, false); err != nil {
				return f, err
			}
		}
	}
	for _, c := range p.proxies {
		c.DecodeRoutes(true)
	}
	f.Load = benchkit.LoadAverage()
	return f, nil
}

// timeEdit makes edit v of service i's kind and waits until every client it reaches
// holds it: the time from writing the file to the last arrival, and the resource bytes
// the clients received meanwhile.
func timeEdit(ctx context.Context, p *plane, kind string, i, v int) (time.Duration, int64, error) {
	typ, name, clients := p.watched(kind, i)
	clients = slices.DeleteFunc(slices.Clone(clients), (*xdsfleet.Client).Stalled)
	old := make([]string, len(clients))
	var before int64
	for j, c := range clients {
		old[j] = c.Version(typ, name)
		before += c.Received()
	}
	start := time.Now()
	if err := edit(p.dir, kind, i, v); err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last time.Time
	for j, c := range clients {
		at, err := c.WaitVersion(ctx, typ, name, old[j])
		if err != nil {
			return 0, 0, fmt.Errorf("edit %d of %s %d: %w", v, kind, i, err)
		}
		if at.After(last) {
			last = at
		}
	}
	var after int64
	for _, c := range clients {
		after += c.Received()
	}
	return last.Sub(start), after - before, nil
}

// liveHeap has the control plane collect twice (the heap profile's gc=1) and reads
// what is left: the memory its state and the clients' books hold. One collection
// would leave the buffers pooled for gRPC's writes (sync.Pool keeps them through
// one), garbage that depends on how many clients were sent their first state lately.
func liveHeap(ctx context.Context, p *plane) (int64, error) {
	for range 2 {
		if err := benchkit.FetchProfile(ctx, "http://"+p.admin+"/debug/pprof/heap?gc=1", os.DevNull); err != nil {
			return 0, err
		}
	}
	v, err := benchkit.Metric(ctx, "http://"+p.admin+"/metrics", "go_memstats_heap_alloc_bytes")
	return int64(v), err
}
