package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// warnings are the Warning statuses of the resource kind/id in the edge stage, as
// "<reporter>" each.
func warnings(p *pipeline.Pipeline, kind, id string) []string {
	var out []string
	for r := range p.Overview().Edge.Resources.Values() {
		if r.Kind != kind || r.ID() != id {
			continue
		}
		for _, st := range r.Statuses {
			if st.State == validate.Warning {
				out = append(out, st.ReportedBy)
			}
		}
	}
	return out
}

// A replica that has not acknowledged a new AuthConfig when its bound passes is named,
// as a Warning, on that AuthConfig and on the VirtualService whose routes name it, until
// it acknowledges; the replica that did is not named.
func TestAReplicaPastTheBoundIsNamedUntilItAcknowledges(t *testing.T) {
	r := &replicas{acked: map[string]map[string]string{"fast": {}, "slow": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ExtauthAcked: r.each, AckBound: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	ac := fmt.Sprintf("ns%02d.ac-%05d", 1%pipelinetest.Namespaces, 1)
	vs := fmt.Sprintf("ns%02d.vs-%05d", 1%pipelinetest.Namespaces, 1)

	p.Apply(input(1))
	p.Apply(input(2))
	r.ack("fast", ac)
	p.Acked()
	if got := warnings(p, "AuthConfig", ac); got != nil {
		t.Fatalf("Warnings before the bound: %v", got)
	}
	await(t, "the routes published at the bound", func() bool { return served(p, 1) })
	want := []string{"extauth/slow"}
	await(t, "the slow replica named on the AuthConfig and the VirtualService", func() bool {
		return slices.Equal(warnings(p, "AuthConfig", ac), want) && slices.Equal(warnings(p, "VirtualService", vs), want)
	})
	if got := warnings(p, "AuthConfig", fmt.Sprintf("ns%02d.ac-%05d", 0, 0)); got != nil {
		t.Fatalf("an AuthConfig every replica has carries Warnings %v", got)
	}

	r.ack("slow", ac)
	p.Acked()
	await(t, "the Warnings gone once the slow replica acknowledged", func() bool {
		return warnings(p, "AuthConfig", ac) == nil && warnings(p, "VirtualService", vs) == nil
	})
}
