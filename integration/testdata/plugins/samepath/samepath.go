// Command samepath is a test plugin built twice, with a different Greeting each time,
// as the same package: both builds get the plugin path of its import path.
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Greeting differs between the two builds.
const Greeting = "first"

type greeter struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = greeter{}

func (greeter) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func (greeter) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader("x-greeting", Greeting), nil
}

func main() {}
