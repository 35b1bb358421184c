// Command nonpointer is a test plugin whose NewConfigInstance returns a value, into
// which no config could be decoded.
package main

import (
	"context"
	"errors"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's config.
type Config struct{ Greeting string }

type valuePlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = valuePlugin{}

func (valuePlugin) NewConfigInstance(context.Context) (any, error) { return Config{}, nil }

func (valuePlugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return nil, errors.New("nonpointer: not meant to serve")
}

func main() {}
