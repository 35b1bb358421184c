package xds_test

import (
	"slices"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestEachServingLeavesOutJoiningReplicas: an extauth replica that opened its stream
// saying it was not serving yet is left out of EachServing until it answers the
// stream's first response (ACK or NACK); one that said it was serving, or said
// nothing, is in it from the start, as in EachAcked.
func TestEachServingLeavesOutJoiningReplicas(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(2)); err != nil {
		t.Fatal(err)
	}
	saying := func(id string, serving bool) *deltaClientNode {
		n := node(id, xds.RoleExtauth)
		n.Metadata.Fields[xds.ServingKey] = structpb.NewBoolValue(serving)
		return &deltaClientNode{id: id, c: newDelta(t, s.addr, n, nil, xds.ExtAuthConfigType)}
	}
	joining, nacking := saying("joining", false), saying("joining-nack", false)
	serving := saying("serving", true)
	silent := &deltaClientNode{id: "silent", c: newDelta(t, s.addr, node("silent", xds.RoleExtauth), nil, xds.ExtAuthConfigType)}
	nodes := func(each func(role, typeURL string, f func(string, map[string]string))) []string {
		var out []string
		each(xds.RoleExtauth, xds.ExtAuthConfigType, func(n string, _ map[string]string) { out = append(out, n) })
		slices.Sort(out)
		return out
	}
	for _, c := range []*deltaClientNode{joining, nacking, serving, silent} {
		c.first = c.c.next()
	}
	testbin.Eventually(t, wait, func() error {
		if got := nodes(s.EachAcked); len(got) != 4 {
			return errString("not every stream named its node yet")
		}
		return nil
	})
	if d := cmp.Diff([]string{"serving", "silent"}, nodes(s.EachServing)); d != "" {
		t.Errorf("before any answer (-want +got):\n%s", d)
	}
	joining.c.answer(joining.first, "")
	nacking.c.answer(nacking.first, "config_id ns.x: refused")
	testbin.Eventually(t, wait, func() error {
		if d := cmp.Diff([]string{"joining", "joining-nack", "serving", "silent"}, nodes(s.EachServing)); d != "" {
			return errString("after the joining replicas answered (-want +got):\n" + d)
		}
		return nil
	})
}

type deltaClientNode struct {
	id    string
	c     *deltaClient
	first *discovery.DeltaDiscoveryResponse
}
