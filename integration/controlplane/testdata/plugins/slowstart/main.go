// Command slowstart is a test plugin whose services take StartFor to start (as one
// that loads a large policy would), and then allow every request, marking it with the
// header x-slowstart.
package main

import (
	"context"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

type config struct{ StartFor string }

type slowPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = slowPlugin{}

func (slowPlugin) NewConfigInstance(context.Context) (any, error) { return &config{}, nil }

func (slowPlugin) GetAuthService(_ context.Context, c any) (pluginapi.AuthService, error) {
	return service(*c.(*config)), nil
}

type service config

func (s service) Start(ctx context.Context) error {
	d, _ := time.ParseDuration(s.StartFor)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return nil
}

func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader("x-slowstart", "allowed"), nil
}

func main() {}
