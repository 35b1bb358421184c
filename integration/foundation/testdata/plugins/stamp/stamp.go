// Command stamp is a test plugin: it allows every request and sets Header to Value, so
// chain tests can see what a later step receives.
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

type config struct {
	Header string
	Value  string
}

type stampPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = stampPlugin{}

func (stampPlugin) NewConfigInstance(context.Context) (any, error) { return &config{}, nil }

func (stampPlugin) GetAuthService(_ context.Context, c any) (pluginapi.AuthService, error) {
	return service(*c.(*config)), nil
}

type service config

func (service) Start(context.Context) error { return nil }

func (s service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader(s.Header, s.Value), nil
}

func main() {}
