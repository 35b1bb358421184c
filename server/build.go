package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/pluginapi"
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
	plug, err := b.Plugins.Open(p.GetPluginFileName(), p.GetExportedSymbolName())
	if err != nil {
		return nil, err
	}
	var raw []byte
	if p.GetConfig() != nil {
		if raw, err = protojson.Marshal(p.GetConfig()); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	svc, err := loader.NewService(ctx, plug, raw)
	if err != nil {
		return nil, err
	}
	if err := loader.Start(ctx, svc); err != nil {
		return nil, err
	}
	return &PluginStep{name: "step/" + p.GetName(), file: p.GetPluginFileName(), svc: svc}, nil
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
