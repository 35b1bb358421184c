// Command lifecyclepanic is a test plugin that panics in one lifecycle method. Its
// config's Where picks GetAuthService ("get") or Start ("start"). NewConfigInstance
// runs before any config is decoded, so the panic there has a symbol of its own:
// PanicsInNew.
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's config.
type Config struct {
	// Where is the method that panics: "get" or "start".
	Where string
}

type lifecyclePlugin struct{}

// Plugin panics where its config says.
var Plugin pluginapi.ExtAuthPlugin = lifecyclePlugin{}

func (lifecyclePlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (lifecyclePlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c := cfg.(*Config)
	if c.Where == "get" {
		panic("lifecyclepanic: on purpose (get)")
	}
	return service(*c), nil
}

type service Config

func (s service) Start(context.Context) error {
	if s.Where == "start" {
		panic("lifecyclepanic: on purpose (start)")
	}
	return nil
}

func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow(), nil
}

type newPanics struct{ lifecyclePlugin }

func (newPanics) NewConfigInstance(context.Context) (any, error) {
	panic("lifecyclepanic: on purpose (new)")
}

// PanicsInNew panics in NewConfigInstance.
var PanicsInNew pluginapi.ExtAuthPlugin = newPanics{}

func main() {}
