// Command versioned is an out-of-tree test plugin that says which build it is: the
// swap tests build it twice with `gatehouse plugin build`, changing Version, and
// replace one with the other while Checks run.
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Version is set to another value for the second build.
const Version = "v1"

type versionedPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = versionedPlugin{}

func (versionedPlugin) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func (versionedPlugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader("x-version", Version), nil
}

func main() {}
