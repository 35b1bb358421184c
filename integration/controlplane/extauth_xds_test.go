package controlplane_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

const patience = 20 * time.Second

// controlPlane is an in-process xds.Server on a fixed loopback address, which can be
// stopped and started again there.
type controlPlane struct {
	t     *testing.T
	addr  string
	srv   *xds.Server
	grpc  *grpc.Server
	reg   *prometheus.Registry
	mu    sync.Mutex
	nacks []xds.Nack
	// streams counts the ADS streams open, read or not: the server reads none before
	// its first publish.
	streams atomic.Int64
}

func startControlPlane(t *testing.T, addr string) *controlPlane {
	t.Helper()
	cp := &controlPlane{t: t, reg: prometheus.NewRegistry()}
	cp.srv = xds.NewServer(xds.Options{Log: zerolog.Nop(), Registerer: cp.reg, OnNack: func(n xds.Nack) {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		cp.nacks = append(cp.nacks, n)
	}})
	cp.grpc = grpc.NewServer(grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		cp.streams.Add(1)
		defer cp.streams.Add(-1)
		return handler(srv, ss)
	}))
	cp.srv.Register(cp.grpc)
	var lis net.Listener
	testbin.Eventually(t, patience, func() (err error) {
		lis, err = net.Listen("tcp", addr)
		return err
	})
	cp.addr = lis.Addr().String()
	go func() { _ = cp.grpc.Serve(lis) }()
	t.Cleanup(cp.grpc.Stop)
	return cp
}

func (cp *controlPlane) publish(cfgs ...*extauthv1.ExtAuthConfig) {
	cp.t.Helper()
	r := xds.Resources{xds.ExtAuthConfigType: {}}
	for _, c := range cfgs {
		r[xds.ExtAuthConfigType][c.GetConfigId()] = c
	}
	if err := cp.srv.Publish(xds.RoleExtauth, r); err != nil {
		cp.t.Fatal(err)
	}
}

// nackFor waits for a NACK whose detail names configID and returns it.
func (cp *controlPlane) nackFor(configID string) xds.Nack {
	cp.t.Helper()
	var got xds.Nack
	testbin.Eventually(cp.t, patience, func() error {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		for _, n := range cp.nacks {
			if strings.Contains(n.Detail, configID+": ") {
				got = n
				return nil
			}
		}
		return fmt.Errorf("no NACK naming %s among %v", configID, cp.nacks)
	})
	return got
}

func (cp *controlPlane) extauthClients() float64 {
	families, _ := cp.reg.Gather()
	for _, f := range families {
		if f.GetName() == "gatehouse_xds_clients" {
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == xds.RoleExtauth {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// requiredHeader is an AuthConfig running the sample required_header plugin.
func requiredHeader(id, pluginFile string, allowed ...string) *extauthv1.ExtAuthConfig {
	values := make([]any, len(allowed))
	for i, a := range allowed {
		values[i] = a
	}
	cfg, err := structpb.NewStruct(map[string]any{"RequiredHeader": "x-required", "AllowedValues": values})
	if err != nil {
		panic(err)
	}
	return &extauthv1.ExtAuthConfig{ConfigId: id, Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{
		Name: "required_header", PluginFileName: pluginFile, ExportedSymbolName: "Plugin", Config: cfg,
	}}}}}
}

// checker sends Envoy-shaped CheckRequests to an extauth server.
type checker struct {
	client authv3.AuthorizationClient
}

func newChecker(t *testing.T, addr string) *checker {
	t.Helper()
	return &checker{client: authv3.NewAuthorizationClient(testbin.Dial(t, addr))}
}

// check returns the gRPC status code of a Check of configID with x-required: value.
func (c *checker) check(configID, value string) (code.Code, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := map[string]string{":method": "GET", ":path": "/", ":authority": "example.test", "x-required": value}
	resp, err := c.client.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "example.test", Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": configID},
	}})
	if err != nil {
		return 0, err
	}
	return code.Code(resp.GetStatus().GetCode()), nil
}

// verdicts checks configID with each value and says where the verdicts differ from want.
func (c *checker) verdicts(configID string, want map[string]code.Code) error {
	for value, w := range want {
		got, err := c.check(configID, value)
		if err != nil {
			return fmt.Errorf("%s with %q: %w", configID, value, err)
		}
		if got != w {
			return fmt.Errorf("%s with %q: %v, want %v", configID, value, got, w)
		}
	}
	return nil
}
