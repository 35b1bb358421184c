// Command loadplugin is the plugin `make bench` times from a new .so appearing in the
// plugin folder to it serving. The bench builds it several times with `gatehouse
// plugin build`, each time with another Build, so that every build differs and gets
// its own plugin path; the header it sets tells which build answered.
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Build is replaced by the bench with the build's number.
const Build = "dev"

type plugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = plugin{}

func (plugin) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func (plugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader("x-plugin-build", Build), nil
}

func main() {}
