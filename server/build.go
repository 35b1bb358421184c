package server

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/oidc"
)

// PluginSource gives the ExtAuthPlugin a file exports as a symbol.
type PluginSource interface {
	Open(file, symbol string) (pluginapi.ExtAuthPlugin, error)
}

// Builder assembles chains from ExtAuthConfigs.
type Builder struct {
	Plugins PluginSource
	// OIDC holds the logger and HTTP client of built-in OIDC steps.
	OIDC oidc.Options
	// StartTimeout bounds building and starting one plugin step (DefaultStartTimeout
	// when zero).
	StartTimeout time.Duration
}

// Build is a BuildFunc. Errors name the step by its AuthConfig field path.
func (b *Builder) Build(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
	c := &chain.Chain{ID: cfg.GetConfigId(), Timeout: cfg.GetRequestTimeout().AsDuration()}
	for i, st := range cfg.GetSteps() {
		step, err := b.step(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("spec.configs[%d]%w", i, err)
		}
		c.Steps = append(c.Steps, step)
	}
	return c, nil
}

func (b *Builder) step(ctx context.Context, st *extauthv1.Step) (chain.Step, error) {
	switch k := st.GetKind().(type) {
	case *extauthv1.Step_PluginAuth:
		s, err := b.pluginStep(ctx, k.PluginAuth)
		if err != nil {
			return nil, fmt.Errorf(".pluginAuth (%s): %w", k.PluginAuth.GetName(), err)
		}
		return s, nil
	case *extauthv1.Step_OidcAuthorizationCode:
		s, err := oidc.New(ctx, k.OidcAuthorizationCode, b.OIDC)
		if err != nil {
			return nil, fmt.Errorf(".oauth2.oidcAuthorizationCode: %w", err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf(": unknown step kind %T", k)
	}
}

func (b *Builder) pluginStep(ctx context.Context, p *extauthv1.PluginAuth) (chain.Step, error) {
	var raw []byte
	if p.GetConfig() != nil {
		var err error
		if raw, err = protojson.Marshal(p.GetConfig()); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	if p.GetIsolation() == IsolationProcess {
		return b.isolatedStep(ctx, p, raw)
	}
	plug, err := b.Plugins.Open(p.GetPluginFileName(), p.GetExportedSymbolName())
	if err != nil {
		return nil, err
	}
	svc, err := b.startService(ctx, plug, raw)
	if err != nil {
		return nil, err
	}
	return &PluginStep{name: "step/" + p.GetName(), file: p.GetPluginFileName(), svc: svc}, nil
}

// DefaultStartTimeout bounds NewConfigInstance, GetAuthService and Start of one step.
const DefaultStartTimeout = 10 * time.Second

// startService builds and starts the plugin's service on its own goroutine, so a
// plugin that never returns from GetAuthService or Start cannot hold up every other
// config change: past the timeout, or once ctx ends (the build is given up), the step
// is rejected and the call abandoned.
func (b *Builder) startService(ctx context.Context, plug pluginapi.ExtAuthPlugin, raw []byte) (pluginapi.AuthService, error) {
	timeout := b.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	type result struct {
		svc pluginapi.AuthService
		err error
	}
	done := make(chan result, 1)
	go func() {
		svc, err := pluginhost.NewService(ctx, plug, raw)
		if err == nil {
			err = pluginhost.Start(ctx, svc)
		}
		done <- result{svc, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.svc, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("NewConfigInstance, GetAuthService and Start had not returned when the build was cancelled: %w", ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("NewConfigInstance, GetAuthService and Start did not return within %s; the call is abandoned (a plugin must not block there: start background work in a goroutine that ends when Start's context is cancelled)", timeout)
	}
}

// PluginStep runs a plugin's AuthService as a chain step.
type PluginStep struct {
	name, file string
	svc        pluginapi.AuthService
}

// Name implements chain.Step.
func (s *PluginStep) Name() string { return s.name }

// File is the plugin file the step was loaded from.
func (s *PluginStep) File() string { return s.file }

// Authorize implements chain.Step.
func (s *PluginStep) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return s.svc.Authorize(ctx, req)
}
