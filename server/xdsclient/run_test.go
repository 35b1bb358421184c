package xdsclient_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

func TestRunFollowsDeltas(t *testing.T) {
	c := startCP(t, "127.0.0.1:0", map[string]map[string]types.Resource{
		xds.ExtAuthConfigType: {"ns.a": cfg("ns.a"), "ns.b": cfg("ns.b")},
	})
	rec := &recorder{}
	run(t, c.addr, rec)
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.a", "ns.b")
	waitSet(t, rec, xds.ClusterType)

	if err := c.caches[xds.ExtAuthConfigType].UpdateResources(
		map[string]types.Resource{"ns.c": cfg("ns.c")}, []string{"ns.a"}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.b", "ns.c")

	reqs, resps := c.sent()
	t.Run("subscribes as its role to every resource", func(t *testing.T) {
		for _, typ := range testTypes {
			i := slices.IndexFunc(reqs, func(r *xdsRequest) bool { return r.GetTypeUrl() == typ })
			if i < 0 {
				t.Fatalf("no request for %s", typ)
			}
			r := reqs[i]
			if got := r.GetNode().GetMetadata().GetFields()[xds.RoleKey].GetStringValue(); got != xds.RoleExtauth {
				t.Errorf("%s: node role %q, want %q", typ, got, xds.RoleExtauth)
			}
			if r.GetNode().GetId() != "test-node" {
				t.Errorf("%s: node id %q", typ, r.GetNode().GetId())
			}
			if d := cmp.Diff([]string{"*"}, r.GetResourceNamesSubscribe()); d != "" {
				t.Errorf("%s: subscription (-want +got):\n%s", typ, d)
			}
		}
	})
	t.Run("acks every response", func(t *testing.T) {
		testbin.Eventually(t, 10*time.Second, func() error {
			reqs, resps = c.sent()
			for _, resp := range resps {
				i := slices.IndexFunc(reqs, func(r *xdsRequest) bool { return r.GetResponseNonce() == resp.GetNonce() })
				if i < 0 {
					return fmt.Errorf("response %s not answered", resp.GetNonce())
				}
				if reqs[i].GetErrorDetail() != nil {
					return fmt.Errorf("response %s NACKed: %v", resp.GetNonce(), reqs[i].GetErrorDetail())
				}
			}
			return nil
		})
	})
}

func TestRunNacksWhatTheHandlerRefuses(t *testing.T) {
	c := startCP(t, "127.0.0.1:0", map[string]map[string]types.Resource{
		xds.ExtAuthConfigType: {"ns.good": cfg("ns.good")},
	})
	rec := &recorder{fail: map[string]bool{"ns.bad": true, "ns.worse": true}}
	run(t, c.addr, rec)
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.good")

	if err := c.caches[xds.ExtAuthConfigType].UpdateResources(map[string]types.Resource{
		"ns.bad": cfg("ns.bad"), "ns.worse": cfg("ns.worse"),
	}, nil); err != nil {
		t.Fatal(err)
	}
	// The handler still sees what the server sent, including what it refuses.
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.bad", "ns.good", "ns.worse")
	testbin.Eventually(t, 10*time.Second, func() error {
		reqs, _ := c.sent()
		for _, r := range reqs {
			if r.GetErrorDetail() != nil {
				want := "ns.bad: does not build\nns.worse: does not build"
				if d := cmp.Diff(want, r.GetErrorDetail().GetMessage()); d != "" {
					return fmt.Errorf("error_detail (-want +got):\n%s", d)
				}
				return nil
			}
		}
		return fmt.Errorf("no NACK yet")
	})

	// Once the bad ones are gone, the next response is ACKed.
	if err := c.caches[xds.ExtAuthConfigType].UpdateResources(nil, []string{"ns.bad", "ns.worse"}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.good")
	testbin.Eventually(t, 10*time.Second, func() error {
		reqs, resps := c.sent()
		lastResp := resps[len(resps)-1]
		for _, r := range reqs {
			if r.GetResponseNonce() == lastResp.GetNonce() {
				if r.GetErrorDetail() != nil {
					t.Fatalf("the response without the bad configs was NACKed: %v", r.GetErrorDetail())
				}
				return nil
			}
		}
		return fmt.Errorf("last response %s not answered yet", lastResp.GetNonce())
	})
}

func TestRunKeepsItsStateAcrossReconnects(t *testing.T) {
	initial := map[string]map[string]types.Resource{
		xds.ExtAuthConfigType: {"ns.a": cfg("ns.a"), "ns.b": cfg("ns.b")},
	}
	first := startCP(t, "127.0.0.1:0", initial)
	rec := &recorder{}
	run(t, first.addr, rec)
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.a", "ns.b")
	_, firstResps := first.sent()
	versions := map[string]string{}
	for _, resp := range firstResps {
		for _, r := range resp.GetResources() {
			versions[r.GetName()] = r.GetVersion()
		}
	}

	first.stop()
	// The control plane comes back on the same address with one config changed and one
	// added; "ns.a" is unchanged and must not be sent again.
	changed := &extauthv1.ExtAuthConfig{ConfigId: "ns.b", Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{
		PluginAuth: &extauthv1.PluginAuth{Name: "required_header", Config: &structpb.Struct{}},
	}}}}
	second := startCP(t, first.addr, map[string]map[string]types.Resource{
		xds.ExtAuthConfigType: {"ns.a": cfg("ns.a"), "ns.b": changed, "ns.c": cfg("ns.c")},
	})
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.a", "ns.b", "ns.c")

	reqs, resps := second.sent()
	t.Run("announces what it has", func(t *testing.T) {
		i := slices.IndexFunc(reqs, func(r *xdsRequest) bool { return r.GetTypeUrl() == xds.ExtAuthConfigType })
		if d := cmp.Diff(versions, reqs[i].GetInitialResourceVersions()); d != "" {
			t.Errorf("initial_resource_versions (-want +got):\n%s", d)
		}
	})
	t.Run("is not sent what it has", func(t *testing.T) {
		var names []string
		for _, resp := range resps {
			if resp.GetTypeUrl() != xds.ExtAuthConfigType {
				continue
			}
			for _, r := range resp.GetResources() {
				names = append(names, r.GetName())
			}
		}
		slices.Sort(names)
		if d := cmp.Diff([]string{"ns.b", "ns.c"}, names); d != "" {
			t.Errorf("resources sent after reconnecting (-want +got):\n%s", d)
		}
	})
	t.Run("never hands over an empty set", func(t *testing.T) {
		for i, c := range rec.all() {
			if c.typeURL == xds.ExtAuthConfigType && len(c.ids) == 0 {
				t.Errorf("call %d: empty ExtAuthConfig set", i)
			}
		}
	})
}
