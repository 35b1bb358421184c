package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// remembered is a state store that remembers the AuthConfigs of the first n generated
// services, as that of a control plane that served them before its restart does.
type remembered int

func (n remembered) Origin(k source.Key) (string, bool) {
	for i := range int(n) {
		if k.Kind == apiv1.KindAuthConfig && k.Name == fmt.Sprintf("ac-%05d", i) && k.Namespace == fmt.Sprintf("ns%02d", i%pipelinetest.Namespaces) {
			return "x", true
		}
	}
	return "", false
}

func (remembered) Get(source.Key) (*source.Resource, bool) { return nil, false }
func (remembered) From(string) []source.Resource           { return nil }
func (remembered) Same(*source.Resource) bool              { return false }

// After a restart of the control plane (SIGKILL, issue 26's churn), the gate released
// the routes of an AuthConfig written just after it once the replicas connected so far
// had acknowledged it, and a replica not reconnected yet denied their requests; the
// routes of one written during the restart went out in the first run, before any
// replica had it. Now, until the bound has passed since the first run after a restart,
// a new AuthConfig's routes wait for it, since replicas may still be reconnecting (all
// of them, without a roster of them); and when the first run itself finds AuthConfigs
// new, the proxies' first publish waits until they are acknowledged, the proxies
// keeping what they had meanwhile. A first run with nothing new, and a first start,
// hold nothing back.
func TestAfterARestartNewAuthConfigsWaitForReconnectingReplicas(t *testing.T) {
	id := func(i int) string { return fmt.Sprintf("ns%02d.ac-%05d", i%pipelinetest.Namespaces, i) }
	t.Run("written just after the restart", func(t *testing.T) {
		// r1 has reconnected and acknowledges everything; r2 may not be back yet.
		r := &replicas{acked: map[string]map[string]string{"r1": {}}}
		p := regating(t, r, pipeline.Options{AckBound: time.Hour, Memory: remembered(1)})
		p.Apply(input(1))
		p.Apply(input(2))
		r.ack("r1", id(0))
		r.ack("r1", id(1))
		p.Acked()
		time.Sleep(100 * time.Millisecond)
		if !served(p, 0) {
			t.Error("the route whose AuthConfig served before the restart was held")
		}
		if served(p, 1) {
			t.Error("the new AuthConfig's route was served while a replica may still be reconnecting")
		}
	})
	t.Run("released at the bound", func(t *testing.T) {
		r := &replicas{acked: map[string]map[string]string{"r1": {}}}
		p := regating(t, r, pipeline.Options{AckBound: 200 * time.Millisecond, Memory: remembered(1)})
		p.Apply(input(1))
		p.Apply(input(2))
		r.ack("r1", id(1))
		p.Acked()
		await(t, "the new virtual host once the bound after the restart passed", func() bool { return served(p, 1) })
	})
	t.Run("a first start holds nothing back", func(t *testing.T) {
		r := &replicas{acked: map[string]map[string]string{"r1": {}}}
		p := regating(t, r, pipeline.Options{AckBound: time.Hour, Memory: remembered(0)})
		p.Apply(input(2))
		if !served(p, 0) || !served(p, 1) {
			t.Errorf("served 0 %t, 1 %t; want both", served(p, 0), served(p, 1))
		}
	})
	t.Run("written during the restart", func(t *testing.T) {
		// Every replica that may have served is back (the roster); the first run finds
		// ac-00001 new, which r1 loads for a while.
		r := &replicas{acked: map[string]map[string]string{"r1": {}}}
		roster := []string{"r1"}
		p := regating(t, r, pipeline.Options{AckBound: time.Hour, Memory: remembered(1), Replicas: &roster})
		p.Apply(input(2))
		r.ack("r1", id(0))
		p.Acked()
		time.Sleep(100 * time.Millisecond)
		if served(p, 0) || served(p, 1) {
			t.Errorf("served 0 %t, 1 %t before the replica acknowledged the new AuthConfig; want neither", served(p, 0), served(p, 1))
		}
		r.ack("r1", id(1))
		p.Acked()
		await(t, "both virtual hosts once the replica acknowledged the new AuthConfig", func() bool { return served(p, 0) && served(p, 1) })
	})
	t.Run("after a first start, acknowledged is enough", func(t *testing.T) {
		r := &replicas{acked: map[string]map[string]string{"r1": {}}}
		p := regating(t, r, pipeline.Options{AckBound: time.Hour, Memory: remembered(0)})
		p.Apply(input(1))
		p.Apply(input(2))
		r.ack("r1", id(1))
		p.Acked()
		await(t, "the new virtual host once the replica acknowledged it", func() bool { return served(p, 1) })
	})
}

// With the roster of replicas that may have served before the restart, a new
// AuthConfig's routes wait until each of them is back and has acknowledged it, not
// for the whole bound.
func TestAfterARestartTheRememberedReplicasAreAwaited(t *testing.T) {
	id := func(i int) string { return fmt.Sprintf("ns%02d.ac-%05d", i%pipelinetest.Namespaces, i) }
	r := &replicas{acked: map[string]map[string]string{"r1": {}}} // r2 is not back yet
	roster := []string{"r1", "r2"}
	p := regating(t, r, pipeline.Options{AckBound: time.Hour, Memory: remembered(1), Replicas: &roster})
	p.Apply(input(1))
	p.Apply(input(2))
	r.ack("r1", id(0))
	r.ack("r1", id(1))
	p.Acked()
	time.Sleep(100 * time.Millisecond)
	if served(p, 1) {
		t.Fatal("the new AuthConfig's route was served while a remembered replica was not back")
	}
	r.mu.Lock()
	r.acked["r2"] = map[string]string{}
	r.mu.Unlock()
	p.Acked()
	time.Sleep(100 * time.Millisecond)
	if served(p, 1) {
		t.Fatal("the new AuthConfig's route was served before the replica back acknowledged it")
	}
	r.ack("r2", id(0))
	r.ack("r2", id(1))
	p.Acked()
	await(t, "the new virtual host once every remembered replica is back and acknowledged it", func() bool { return served(p, 1) })
}

// regating is a pipeline with o, told by r what the extauth replicas acknowledged,
// whose held virtual hosts are released (Regate) until the test ends.
func regating(t *testing.T, r *replicas, o pipeline.Options) *pipeline.Pipeline {
	t.Helper()
	o.Log, o.ExtauthAcked = zerolog.New(zerolog.NewTestWriter(t)), r.each
	p := pipeline.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go p.Regate(ctx)
	return p
}
