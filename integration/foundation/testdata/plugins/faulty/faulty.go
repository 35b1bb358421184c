// Command faulty is a test plugin that fails on purpose in Authorize: Mode "panic"
// panics, "error" returns an error, "hang" ignores its context for HangFor.
package main

import (
	"context"
	"errors"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

type config struct {
	Mode    string
	HangFor string
}

type faultyPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = faultyPlugin{}

func (faultyPlugin) NewConfigInstance(context.Context) (any, error) { return &config{}, nil }

func (faultyPlugin) GetAuthService(_ context.Context, c any) (pluginapi.AuthService, error) {
	return service(*c.(*config)), nil
}

type service config

func (service) Start(context.Context) error { return nil }

func (s service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	switch s.Mode {
	case "panic":
		panic("faulty plugin panics on purpose")
	case "error":
		return nil, errors.New("faulty plugin fails on purpose")
	case "hang":
		d, _ := time.ParseDuration(s.HangFor)
		time.Sleep(d)
	}
	return pluginapi.Allow(), nil
}

func main() {}
