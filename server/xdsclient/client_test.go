package xdsclient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// cp is a real go-control-plane ADS server on loopback, with one linear cache per type,
// recording what its clients send and what it sends them.
type cp struct {
	addr   string
	caches map[string]*cachev3.LinearCache
	grpc   *grpc.Server

	mu        sync.Mutex
	requests  []*discovery.DeltaDiscoveryRequest
	responses []*discovery.DeltaDiscoveryResponse
}

var testTypes = []string{xds.ExtAuthConfigType, xds.ClusterType}

func startCP(t *testing.T, addr string, initial map[string]map[string]types.Resource) *cp {
	t.Helper()
	c := &cp{caches: map[string]*cachev3.LinearCache{}}
	mux := &cachev3.MuxCache{
		Classify:      func(r *cachev3.Request) string { return r.GetTypeUrl() },
		ClassifyDelta: func(r *cachev3.DeltaRequest) string { return r.GetTypeUrl() },
		Caches:        map[string]cachev3.Cache{},
	}
	for _, typ := range testTypes {
		c.caches[typ] = cachev3.NewLinearCache(typ, cachev3.WithInitialResources(initial[typ]))
		mux.Caches[typ] = c.caches[typ]
	}
	cb := serverv3.CallbackFuncs{
		StreamDeltaRequestFunc: func(_ int64, r *discovery.DeltaDiscoveryRequest) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.requests = append(c.requests, r)
			return nil
		},
		StreamDeltaResponseFunc: func(_ int64, _ *discovery.DeltaDiscoveryRequest, r *discovery.DeltaDiscoveryResponse) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.responses = append(c.responses, r)
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := serverv3.NewServer(ctx, mux, cb)
	c.grpc = grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(c.grpc, srv)
	lis := listen(t, addr)
	c.addr = lis.Addr().String()
	go func() { _ = c.grpc.Serve(lis) }()
	t.Cleanup(func() { c.grpc.Stop(); cancel() })
	return c
}

// listen listens on addr, retrying a while when it is a fixed port being given back.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	var lis net.Listener
	testbin.Eventually(t, 10*time.Second, func() (err error) {
		lis, err = net.Listen("tcp", addr)
		return err
	})
	return lis
}

func (c *cp) stop() { c.grpc.Stop() }

func (c *cp) sent() ([]*discovery.DeltaDiscoveryRequest, []*discovery.DeltaDiscoveryResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests), slices.Clone(c.responses)
}

// recorder is a Handle that keeps every call and fails the configs named in fail.
type recorder struct {
	mu    sync.Mutex
	calls []call
	fail  map[string]bool
}

type call struct {
	typeURL string
	ids     []string // config_ids (or names) of the set handed over, sorted
}

func (r *recorder) handle(typeURL string, res map[string]*anypb.Any) error {
	var ids, failed []string
	for name, a := range res {
		if typeURL == xds.ExtAuthConfigType {
			var cfg extauthv1.ExtAuthConfig
			if err := a.UnmarshalTo(&cfg); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			name = cfg.GetConfigId()
		}
		ids = append(ids, name)
	}
	sort.Strings(ids)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{typeURL, ids})
	for _, id := range ids {
		if r.fail[id] {
			failed = append(failed, id+": does not build")
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

func (r *recorder) last(typeURL string) (call, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	var out call
	for _, c := range r.calls {
		if c.typeURL == typeURL {
			out, n = c, n+1
		}
	}
	return out, n
}

func (r *recorder) all() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func cfg(id string) *extauthv1.ExtAuthConfig { return &extauthv1.ExtAuthConfig{ConfigId: id} }

func run(t *testing.T, addr string, rec *recorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- xdsclient.Run(ctx, xdsclient.Options{
			Addr: addr, NodeID: "test-node", Role: xds.RoleExtauth, Types: testTypes,
			Log: zerolog.New(zerolog.NewTestWriter(t)), Handle: rec.handle,
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func waitSet(t *testing.T, rec *recorder, typeURL string, want ...string) {
	t.Helper()
	testbin.Eventually(t, 10*time.Second, func() error {
		got, n := rec.last(typeURL)
		if n == 0 {
			return fmt.Errorf("%s not handled yet", typeURL)
		}
		if d := cmp.Diff(want, got.ids); d != "" {
			return fmt.Errorf("%s set (-want +got):\n%s", typeURL, d)
		}
		return nil
	})
}

type xdsRequest = discovery.DeltaDiscoveryRequest
