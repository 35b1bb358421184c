// Command required_header is the sample Gatehouse plugin: a request is allowed only if
// it carries RequiredHeader with one of AllowedValues.
//
// Build it with `make plugins` (or `go build -buildmode=plugin`); it exports Plugin.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's `config` object.
type Config struct {
	RequiredHeader string
	AllowedValues  []string
}

type requiredHeaderPlugin struct{}

// Plugin is the exported symbol Gatehouse looks up.
var Plugin pluginapi.ExtAuthPlugin = requiredHeaderPlugin{}

func (requiredHeaderPlugin) NewConfigInstance(context.Context) (any, error) {
	return &Config{}, nil
}

func (requiredHeaderPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("required_header: unexpected config type %T", cfg)
	}
	if c.RequiredHeader == "" {
		return nil, errors.New("required_header: RequiredHeader must be set")
	}
	if len(c.AllowedValues) == 0 {
		return nil, errors.New("required_header: AllowedValues must list at least one value")
	}
	return &service{header: c.RequiredHeader, allowed: slices.Clone(c.AllowedValues)}, nil
}

type service struct {
	header  string
	allowed []string
}

func (*service) Start(context.Context) error { return nil }

func (s *service) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	v, ok := req.Header(s.header)
	if !ok || !slices.Contains(s.allowed, v) {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true"), nil
}

func main() {}
