package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// replicas are fake extauth replicas: what each acknowledged.
type replicas struct {
	mu    sync.Mutex
	acked map[string]map[string]string
}

func (r *replicas) each(f func(string, map[string]string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for node, a := range r.acked {
		f(node, a)
	}
}

func (r *replicas) ack(node, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked[node][id] = "v"
}

// input is the extauth Upstream and the first n generated services.
func input(n int) *source.Input {
	var rs []source.Resource
	rs = append(rs, pipelinetest.Resource(pipelinetest.ExtauthUpstream("127.0.0.1", 8083), "x"))
	for i := range n {
		for _, o := range []any{pipelinetest.Upstream(i, 80), pipelinetest.AuthConfig(i, "v0"), pipelinetest.VirtualService(i, "/p")} {
			rs = append(rs, pipelinetest.Resource(o, "x"))
		}
	}
	slices.SortFunc(rs, func(a, b source.Resource) int { return a.Key().Compare(b.Key()) })
	return source.NewInput("test", rs, nil)
}

// served says whether the proxies stage serves virtual service i.
func served(p *pipeline.Pipeline, i int) bool {
	want := fmt.Sprintf("ns%02d.vs-%05d", i%pipelinetest.Namespaces, i)
	for _, px := range p.Overview().Proxies {
		for _, l := range px.Listeners {
			for _, vh := range l.VirtualHosts {
				if vh.Name == want {
					return true
				}
			}
		}
	}
	return false
}

// A virtual host whose routes name a new AuthConfig reaches the proxies once every
// extauth replica acknowledged it; what served at the first run is never held.
func TestANewAuthConfigsRoutesWaitForEveryReplica(t *testing.T) {
	r := &replicas{acked: map[string]map[string]string{"r1": {}, "r2": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ExtauthAcked: r.each, AckBound: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)

	p.Apply(input(1))
	if !served(p, 0) {
		t.Fatal("the first run held a virtual host back")
	}
	p.Apply(input(2))
	if served(p, 1) || !served(p, 0) {
		t.Fatalf("after a new service: served 0 %t, 1 %t; want 0 only", served(p, 0), served(p, 1))
	}
	id := fmt.Sprintf("ns%02d.ac-%05d", 1%pipelinetest.Namespaces, 1)
	r.ack("r1", id)
	p.Acked()
	time.Sleep(100 * time.Millisecond)
	if served(p, 1) {
		t.Fatal("served before the second replica acknowledged")
	}
	r.ack("r2", id)
	p.Acked()
	await(t, "the new virtual host once both replicas have its AuthConfig", func() bool { return served(p, 1) })
}

// Past the bound, a replica that lags holds nothing back.
func TestALaggingReplicaHoldsRoutesOnlyUntilTheBound(t *testing.T) {
	r := &replicas{acked: map[string]map[string]string{"r1": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ExtauthAcked: r.each, AckBound: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	p.Apply(input(1))
	p.Apply(input(2))
	if served(p, 1) {
		t.Fatal("served at once")
	}
	await(t, "the new virtual host after the bound", func() bool { return served(p, 1) })
}

// An AuthConfig removed with the routes that named it stays served to extauth until
// every proxy acknowledged route configurations without those routes, and for the
// drain after: not when the proxies had acknowledged what was published before
// (they always have, when the removal is read), nor before they acknowledge the
// removal.
func TestARemovedAuthConfigLeavesExtauthAfterItsRoutesLeaveTheProxies(t *testing.T) {
	for _, drain := range []time.Duration{time.Nanosecond, 2 * time.Second} {
		t.Run(fmt.Sprint("drain ", drain), func(t *testing.T) { removedAuthConfigLeavesLast(t, drain) })
	}
}

func removedAuthConfigLeavesLast(t *testing.T, drain time.Duration) {
	var pub published
	var up atomic.Bool
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), Publish: pub.publish,
		ExtauthAcked: (&replicas{}).each, ProxiesCaughtUp: up.Load, AckBound: time.Hour, RemovalDrain: drain})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	id := fmt.Sprintf("ns%02d.ac-%05d", 1%pipelinetest.Namespaces, 1)

	p.Apply(input(2))
	up.Store(true) // the proxies hold what was published
	p.Apply(input(1))
	if served(p, 1) {
		t.Fatal("the removed virtual host still goes to the proxies")
	}
	if !pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)[id] {
		t.Fatal("the AuthConfig left extauth with its routes' removal, before the proxies had it")
	}
	up.Store(false) // the removal sent, not acknowledged
	p.Acked()
	time.Sleep(50 * time.Millisecond)
	if !pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)[id] {
		t.Fatal("the AuthConfig left extauth before the proxies acknowledged its routes' removal")
	}
	caught := time.Now()
	up.Store(true)
	p.Acked()
	await(t, "the AuthConfig gone from extauth", func() bool { return !pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)[id] })
	if d := time.Since(caught); d < drain {
		t.Fatalf("the AuthConfig left extauth %s after the proxies caught up, before the drain of %s", d, drain)
	}

	// An AuthConfig removed while a route still names it goes at once: the route is
	// then closed (6b), not kept open.
	up.Store(false)
	in := input(2)
	p.Apply(in)
	var rs []source.Resource
	for r := range in.Resources.All() {
		if !(r.Kind == "AuthConfig" && r.Name == "ac-00001") {
			rs = append(rs, *r)
		}
	}
	p.Apply(source.NewInput("test", rs, nil))
	if pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)[id] {
		t.Error("an AuthConfig a served route still names was retained")
	}
}

// A new AuthConfig a replica rejects keeps its routes on what every replica serves,
// past the bound, until a new version of it is acknowledged.
func TestARejectedNewAuthConfigHoldsItsRoutesPastTheBound(t *testing.T) {
	r := &replicas{acked: map[string]map[string]string{"r1": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ExtauthAcked: r.each, AckBound: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	id := fmt.Sprintf("ns%02d.ac-%05d", 1%pipelinetest.Namespaces, 1)
	p.Apply(input(1))
	p.Apply(input(2))
	p.RecordNack(xds.Nack{Role: xds.RoleExtauth, NodeID: "r1", TypeURL: xds.ExtAuthConfigType, Names: []string{id}, Detail: id + ": plugin missing"})
	time.Sleep(300 * time.Millisecond)
	p.Acked()
	time.Sleep(100 * time.Millisecond)
	if served(p, 1) {
		t.Fatal("the routes of a rejected new AuthConfig were published at the bound")
	}

	// A new version, acknowledged, releases them.
	in := input(2)
	var rs []source.Resource
	for res := range in.Resources.All() {
		if res.Kind == "AuthConfig" && res.Name == "ac-00001" {
			rs = append(rs, pipelinetest.Resource(pipelinetest.AuthConfig(1, "v1"), "x"))
			continue
		}
		rs = append(rs, *res)
	}
	p.Apply(source.NewInput("test", rs, nil))
	r.ack("r1", id)
	p.Acked()
	await(t, "the routes once the new version is acknowledged", func() bool { return served(p, 1) })
}
