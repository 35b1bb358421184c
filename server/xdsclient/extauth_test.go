package xdsclient_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// TestExtAuthHandlerDecodesWhatChanged: the client hands on the same *anypb.Any while
// a resource is unchanged, and the handler decodes only the resources that are new or
// changed; before, every response decoded every config again (10,000 for an edit of
// one) and the registry ended up keeping two decodings of each.
func TestExtAuthHandlerDecodesWhatChanged(t *testing.T) {
	var built []string
	var mu sync.Mutex // builds run side by side
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		mu.Lock()
		defer mu.Unlock()
		built = append(built, cfg.GetConfigId())
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, zerolog.Nop())
	handle := xdsclient.ExtAuthHandler(reg, nil)
	const n = 1000
	res := map[string]*anypb.Any{}
	for i := range n {
		id := fmt.Sprintf("ns.c%04d", i)
		res[id] = mustAny(t, &extauthv1.ExtAuthConfig{ConfigId: id})
	}
	if err := handle(xds.ExtAuthConfigType, res); err != nil {
		t.Fatal(err)
	}
	if len(built) != n {
		t.Fatalf("first set: %d configs built, want %d", len(built), n)
	}

	allocs := testing.AllocsPerRun(3, func() {
		if err := handle(xds.ExtAuthConfigType, res); err != nil {
			t.Fatal(err)
		}
	})
	// Maps and slices of the set and the statuses, not a decoding per resource.
	if allocs > n/2 {
		t.Errorf("the same %d resources again: %.0f allocations, want fewer than %d (none decoded)", n, allocs, n/2)
	}

	built = nil
	res["ns.c0001"] = mustAny(t, &extauthv1.ExtAuthConfig{ConfigId: "ns.c0001", Steps: []*extauthv1.Step{{}}})
	res["ns.c0002"] = mustAny(t, &extauthv1.ExtAuthConfig{ConfigId: "ns.other"})
	delete(res, "ns.c0003")
	err := handle(xds.ExtAuthConfigType, res)
	if diff := cmp.Diff([]string{"ns.c0001"}, built); diff != "" {
		t.Errorf("built after one edit (-want +got):\n%s", diff)
	}
	if want := `ns.c0002: config_id "ns.other" differs from the resource name`; err == nil || err.Error() != want {
		t.Errorf("NACK = %v, want %s", err, want)
	}
	if _, ok := reg.Lookup("ns.c0003"); ok {
		t.Error("ns.c0003 still serves after it was removed")
	}
	if _, ok := reg.Lookup("ns.c0002"); !ok {
		t.Error("ns.c0002 no longer serves its last good version")
	}
}

func mustAny(t *testing.T, cfg *extauthv1.ExtAuthConfig) *anypb.Any {
	t.Helper()
	a, err := anypb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
