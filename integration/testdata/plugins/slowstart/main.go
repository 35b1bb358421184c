// Command slowstart is a test plugin whose Start takes its time, as one that loads a
// large policy would: it waits until the file named by Gate exists (when set), then
// sleeps Delay (when set), both until its context ends.
//
// With Header set, a request is allowed when its header Header has the value Value and
// denied otherwise. Without it, every request is allowed and marked with the request
// header x-slowstart: allowed, so a test sees that the request came through this step.
package main

import (
	"context"
	"os"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's config.
type Config struct {
	Gate   string
	Delay  string
	Header string
	Value  string
}

type slowPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = slowPlugin{}

func (slowPlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (slowPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	return service(*cfg.(*Config)), nil
}

type service Config

func (s service) Start(ctx context.Context) error {
	for s.Gate != "" {
		if _, err := os.Stat(s.Gate); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	if s.Delay == "" {
		return nil
	}
	d, err := time.ParseDuration(s.Delay)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (s service) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if s.Header == "" {
		return pluginapi.Allow().WithRequestHeader("x-slowstart", "allowed"), nil
	}
	if v, ok := req.Header(s.Header); ok && v == s.Value {
		return pluginapi.Allow(), nil
	}
	return pluginapi.Forbidden(), nil
}

func main() {}
