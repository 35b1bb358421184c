// Command stuck is a test plugin whose Authorize ignores its context: it blocks until
// the file named by Release exists, so a test decides when the abandoned call returns.
package main

import (
	"context"
	"os"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's config.
type Config struct {
	// Release is the file whose creation lets blocked calls return.
	Release string
}

type stuckPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = stuckPlugin{}

func (stuckPlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (stuckPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	return service(*cfg.(*Config)), nil
}

type service Config

func (service) Start(context.Context) error { return nil }

func (s service) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	for {
		if _, err := os.Stat(s.Release); err == nil {
			return pluginapi.Allow(), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func main() {}
