// Command depversion is a test plugin that links golang.org/x/sys/unix at another
// version (v0.50.0) than the gatehouse binary does.
package main

import (
	"context"
	"strconv"

	"golang.org/x/sys/unix"

	"gatehouse.dev/gatehouse/pluginapi"
)

type depPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = depPlugin{}

func (depPlugin) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func (depPlugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

// Authorize tags the request with the serving process's id.
func (service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow().WithRequestHeader("x-served-by-pid", strconv.Itoa(unix.Getpid())), nil
}

func main() {}
