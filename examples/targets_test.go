package examples_test

import (
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/examples"
)

func upstream(name, addr string, port int) source.Resource {
	u := &apiv1.Upstream{Metadata: apiv1.Metadata{Name: name, Namespace: "gatehouse-system"},
		Spec: apiv1.UpstreamSpec{Static: &apiv1.StaticUpstream{Hosts: []apiv1.Host{{Addr: addr, Port: port}}}}}
	return source.Resource{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream, Namespace: "gatehouse-system",
		Name: name, Object: u, Hash: source.Hash(apiv1.CoreAPIVersion, apiv1.KindUpstream, u)}
}

// hosts are the hosts of every Upstream of in, by id.
func hosts(in *source.Input) map[string][]apiv1.Host {
	out := map[string][]apiv1.Host{}
	for r := range in.Resources.All() {
		if u, ok := r.Object.(*apiv1.Upstream); ok && u.Spec.Static != nil {
			out[r.ID()] = u.Spec.Static.Hosts
		}
	}
	return out
}

// The echo and extauth Upstreams are pointed at dev's addresses (an unspecified host is
// reached on 127.0.0.1); an extauth Upstream is added when there is none; other
// Upstreams are left as they were.
func TestTargetsPointDevsUpstreamsAtItsServices(t *testing.T) {
	targets, err := examples.Targets("127.0.0.1:8090", ":8083")
	if err != nil {
		t.Fatal(err)
	}
	in := source.NewInput("test", []source.Resource{upstream("echo", "10.0.0.1", 80), upstream("other", "10.0.0.2", 81)}, nil)
	got := hosts(targets(in))
	want := map[string]apiv1.Host{
		examples.EchoUpstream:    {Addr: "127.0.0.1", Port: 8090},
		examples.ExtauthUpstream: {Addr: "127.0.0.1", Port: 8083},
		"gatehouse-system.other": {Addr: "10.0.0.2", Port: 81},
	}
	if len(got) != len(want) {
		t.Fatalf("Upstreams %v, want %v", got, want)
	}
	for id, h := range want {
		if len(got[id]) != 1 || got[id][0] != h {
			t.Errorf("%s: hosts %v, want [%v]", id, got[id], h)
		}
	}
	if h := hosts(in)[examples.EchoUpstream]; h[0].Addr != "10.0.0.1" {
		t.Errorf("the Input given was modified: echo hosts %v", h)
	}
	if _, err := examples.Targets("", "no-port"); err == nil {
		t.Error("an extauth address without a port was taken")
	}
}
