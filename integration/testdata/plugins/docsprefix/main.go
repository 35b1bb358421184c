// Command prefix allows requests whose path starts with a configured prefix.
package main

import (
	"context"
	"errors"
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's `config` object. Unknown fields are errors.
type Config struct {
	Prefix string
}

type prefixPlugin struct{}

// Plugin is the symbol the step looks up (exportedSymbolName: Plugin).
var Plugin pluginapi.ExtAuthPlugin = prefixPlugin{}

// NewConfigInstance must return a pointer: the config is decoded into it.
func (prefixPlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

// GetAuthService validates the config; an error rejects the AuthConfig with this reason.
func (prefixPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c := cfg.(*Config)
	if !strings.HasPrefix(c.Prefix, "/") {
		return nil, errors.New("prefix: Prefix must start with /")
	}
	return service{prefix: c.Prefix}, nil
}

type service struct{ prefix string }

func (service) Start(context.Context) error { return nil }

func (s service) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if !strings.HasPrefix(req.Path, s.prefix) {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("x-prefix-checked", "true"), nil
}

func main() {}
