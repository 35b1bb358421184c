package server_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
)

// headerConfig is the fake plugin's config, as a plugin declares it.
type headerConfig struct {
	RequiredHeader string
	AllowedValues  []string
}

// fakePlugin is an in-process pluginapi.ExtAuthPlugin with the logic of
// required_header; hooks make its lifecycle calls fail.
type fakePlugin struct {
	newConfig  func() any                      // nil: &headerConfig{}
	getService func(cfg *headerConfig) error   // nil: fine
	start      func(ctx context.Context) error // nil: fine

	mu       sync.Mutex
	started  []context.Context
	services []*headerService
}

func (p *fakePlugin) NewConfigInstance(context.Context) (any, error) {
	if p.newConfig != nil {
		return p.newConfig(), nil
	}
	return &headerConfig{}, nil
}

func (p *fakePlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c, ok := cfg.(*headerConfig)
	if !ok {
		return nil, fmt.Errorf("config is %T", cfg)
	}
	if p.getService != nil {
		if err := p.getService(c); err != nil {
			return nil, err
		}
	}
	s := &headerService{plugin: p, cfg: *c}
	p.mu.Lock()
	p.services = append(p.services, s)
	p.mu.Unlock()
	return s, nil
}

type headerService struct {
	plugin *fakePlugin
	cfg    headerConfig
}

func (s *headerService) Start(ctx context.Context) error {
	s.plugin.mu.Lock()
	s.plugin.started = append(s.plugin.started, ctx)
	s.plugin.mu.Unlock()
	if s.plugin.start != nil {
		return s.plugin.start(ctx)
	}
	return nil
}

func (s *headerService) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	v, ok := req.Header(s.cfg.RequiredHeader)
	if !ok || !slices.Contains(s.cfg.AllowedValues, v) {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true"), nil
}

// fakePlugins is a server.PluginSource over in-process plugins, by "file/symbol".
type fakePlugins struct {
	plugins map[string]pluginapi.ExtAuthPlugin
	mu      sync.Mutex
	opened  []string
}

func (f *fakePlugins) Open(file, symbol string) (pluginapi.ExtAuthPlugin, error) {
	f.mu.Lock()
	f.opened = append(f.opened, file+"/"+symbol)
	f.mu.Unlock()
	if p, ok := f.plugins[file+"/"+symbol]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("loader: /auth-plugins/%s: no such plugin file", file)
}

func pluginStep(name, file, symbol string, config map[string]any) *extauthv1.Step {
	p := &extauthv1.PluginAuth{Name: name, PluginFileName: file, ExportedSymbolName: symbol}
	if config != nil {
		s, err := structpb.NewStruct(config)
		if err != nil {
			panic(err)
		}
		p.Config = s
	}
	return &extauthv1.Step{Kind: &extauthv1.Step_PluginAuth{PluginAuth: p}}
}

func TestBuilderBuildsAWorkingChain(t *testing.T) {
	rh := &fakePlugin{}
	src := &fakePlugins{plugins: map[string]pluginapi.ExtAuthPlugin{"rh.so/Plugin": rh}}
	b := &server.Builder{Plugins: src}
	cfg := &extauthv1.ExtAuthConfig{
		ConfigId:       "ns.two",
		RequestTimeout: durationpb.New(300 * time.Millisecond),
		Steps: []*extauthv1.Step{
			pluginStep("first", "rh.so", "Plugin", map[string]any{"RequiredHeader": "x-a", "AllowedValues": []any{"1"}}),
			pluginStep("second", "rh.so", "Plugin", map[string]any{"RequiredHeader": "matched-allowed-headers", "AllowedValues": []any{"true"}}),
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := b.Build(ctx, cfg)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if c.ID != "ns.two" || c.Timeout != 300*time.Millisecond || len(c.Steps) != 2 {
		t.Fatalf("chain = %+v, want ns.two, 300ms, 2 steps", c)
	}
	for i, want := range []string{"step/first", "step/second"} {
		ps, ok := c.Steps[i].(*server.PluginStep)
		if !ok {
			t.Fatalf("step %d is %T, want *server.PluginStep", i, c.Steps[i])
		}
		if ps.Name() != want || ps.File() != "rh.so" {
			t.Errorf("step %d = %s from %s, want %s from rh.so", i, ps.Name(), ps.File(), want)
		}
	}
	if diff := cmp.Diff([]string{"rh.so/Plugin", "rh.so/Plugin"}, src.opened); diff != "" {
		t.Errorf("opened (-want +got):\n%s", diff)
	}
	wantCfgs := []headerConfig{{"x-a", []string{"1"}}, {"matched-allowed-headers", []string{"true"}}}
	var gotCfgs []headerConfig
	for _, s := range rh.services {
		gotCfgs = append(gotCfgs, s.cfg)
	}
	if diff := cmp.Diff(wantCfgs, gotCfgs); diff != "" {
		t.Errorf("decoded configs (-want +got):\n%s", diff)
	}

	// The second step sees the first one's header.
	out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{Headers: map[string]string{"x-a": "1"}})
	if out.Err != nil || !out.Response.Allowed {
		t.Errorf("allowed request: outcome %+v", out)
	}
	out = c.Run(context.Background(), &pluginapi.AuthorizationRequest{Headers: map[string]string{"x-a": "2"}})
	if out.Response.Allowed || out.Step != "step/first" {
		t.Errorf("denied request: outcome %+v, want a deny by step/first", out)
	}

	// Start got the build context: cancelling it is how services learn to stop.
	if len(rh.started) != 2 {
		t.Fatalf("Start called %d times, want 2", len(rh.started))
	}
	cancel()
	for i, sctx := range rh.started {
		if sctx.Err() == nil {
			t.Errorf("service %d: Start context not cancelled with the build context", i)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	good := map[string]any{"RequiredHeader": "x", "AllowedValues": []any{"a"}}
	tests := []struct {
		name    string
		plugin  *fakePlugin
		steps   []*extauthv1.Step
		wantErr string
	}{
		{
			name:    "missing plugin file",
			plugin:  &fakePlugin{},
			steps:   []*extauthv1.Step{pluginStep("ok", "rh.so", "Plugin", good), pluginStep("gone", "gone.so", "gone", nil)},
			wantErr: "spec.configs[1].pluginAuth (gone): loader: /auth-plugins/gone.so: no such plugin file",
		},
		{
			name:    "unknown config field",
			plugin:  &fakePlugin{},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", map[string]any{"RequiredHeader": "x", "AllowedValue": "a"})},
			wantErr: `spec.configs[0].pluginAuth (rh): config: unknown field "AllowedValue" (config type server_test.headerConfig)`,
		},
		{
			name:    "config field of the wrong type",
			plugin:  &fakePlugin{},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", map[string]any{"RequiredHeader": 7})},
			wantErr: `spec.configs[0].pluginAuth (rh): config: field "RequiredHeader": got number, want string`,
		},
		{
			name:    "config instance not a pointer",
			plugin:  &fakePlugin{newConfig: func() any { return headerConfig{} }},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", good)},
			wantErr: "spec.configs[0].pluginAuth (rh): config: NewConfigInstance returned server_test.headerConfig; it must return a non-nil pointer (for example &Config{}) for the config to be decoded into",
		},
		{
			name:    "GetAuthService rejects the config",
			plugin:  &fakePlugin{getService: func(c *headerConfig) error { return errors.New("AllowedValues must not be empty") }},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", map[string]any{"RequiredHeader": "x"})},
			wantErr: "spec.configs[0].pluginAuth (rh): GetAuthService: AllowedValues must not be empty",
		},
		{
			name:    "Start fails",
			plugin:  &fakePlugin{start: func(context.Context) error { return errors.New("cannot reach redis") }},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", good)},
			wantErr: "spec.configs[0].pluginAuth (rh): Start: cannot reach redis",
		},
		{
			name:    "Start panics",
			plugin:  &fakePlugin{start: func(context.Context) error { panic("boom") }},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", good)},
			wantErr: "spec.configs[0].pluginAuth (rh): Start panicked: boom",
		},
		{
			name:    "step without a kind",
			plugin:  &fakePlugin{},
			steps:   []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", good), {}},
			wantErr: "spec.configs[1]: unknown step kind <nil>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &server.Builder{Plugins: &fakePlugins{plugins: map[string]pluginapi.ExtAuthPlugin{"rh.so/Plugin": tt.plugin}}}
			c, err := b.Build(context.Background(), &extauthv1.ExtAuthConfig{ConfigId: "ns.x", Steps: tt.steps})
			if err == nil {
				t.Fatalf("Build = %+v, want error %q", c, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("Build error:\n got %q\nwant %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestBuilderThroughRegistry: a config whose plugin config is wrong is Rejected with
// the field path and reason, and the last good version keeps serving.
func TestBuilderThroughRegistry(t *testing.T) {
	b := &server.Builder{Plugins: &fakePlugins{plugins: map[string]pluginapi.ExtAuthPlugin{"rh.so/Plugin": &fakePlugin{}}}}
	reg := server.NewRegistry(b.Build, testLogger(t))
	good := &extauthv1.ExtAuthConfig{ConfigId: "ns.a", Steps: []*extauthv1.Step{
		pluginStep("rh", "rh.so", "Plugin", map[string]any{"RequiredHeader": "x", "AllowedValues": []any{"a"}}),
	}}
	bad := &extauthv1.ExtAuthConfig{ConfigId: "ns.a", Steps: []*extauthv1.Step{
		pluginStep("rh", "rh.so", "Plugin", map[string]any{"RequiredHeader": "x", "Bogus": true}),
	}}
	if st := reg.Apply(cfgs(good), nil); st[0].State != server.StateAccepted {
		t.Fatalf("good config: %+v", st)
	}
	st := reg.Apply(cfgs(bad), nil)
	want := []server.Status{{
		ID: "ns.a", State: server.StateRejected, ServingPrevious: true,
		Reason: `spec.configs[0].pluginAuth (rh): config: unknown field "Bogus" (config type server_test.headerConfig)`,
	}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	c := lookup(t, reg, "ns.a")
	out := c.Run(context.Background(), &pluginapi.AuthorizationRequest{Headers: map[string]string{"x": "a"}})
	if !out.Response.Allowed {
		t.Errorf("last good chain no longer allows: %+v", out)
	}
}

// TestBuilderAbandonsAStartThatNeverReturns: a plugin that blocks in Start (or
// GetAuthService) is rejected after StartTimeout instead of holding every config
// change behind it, and the context it was given is cancelled so it can still end.
func TestBuilderAbandonsAStartThatNeverReturns(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	startCtx := make(chan context.Context, 1)
	blocking := &fakePlugin{start: func(ctx context.Context) error {
		startCtx <- ctx
		<-release
		return nil
	}}
	b := &server.Builder{
		Plugins:      &fakePlugins{plugins: map[string]pluginapi.ExtAuthPlugin{"block.so/Plugin": blocking}},
		StartTimeout: 50 * time.Millisecond,
	}
	reg := server.NewRegistry(b.Build, testLogger(t))
	t.Cleanup(reg.Close)
	cfg := &extauthv1.ExtAuthConfig{ConfigId: "ns.block", Steps: []*extauthv1.Step{
		pluginStep("block", "block.so", "Plugin", map[string]any{"RequiredHeader": "x", "AllowedValues": []any{"a"}}),
	}}
	st := reg.Apply([]*extauthv1.ExtAuthConfig{cfg}, nil)
	if len(st) != 1 || st[0].State != server.StateRejected || !strings.Contains(st[0].Reason, "did not return within 50ms") {
		t.Fatalf("status %+v, want Rejected naming the start timeout", st)
	}
	select {
	case ctx := <-startCtx:
		if ctx.Err() == nil {
			t.Error("the abandoned Start's context is not cancelled")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start was never called")
	}
}
