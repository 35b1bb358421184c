// Command misbehave is a test plugin for `gatehouse plugin test`: it allows a request
// unless its x-mode header asks it to misbehave in Authorize: "panic", "hang" (ignore the
// deadline and never return), "bad-header" (a CR LF in a request header value), "crash"
// (panic on a goroutine of its own, which ends the process) or "deny".
package main

import (
	"context"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is empty: misbehave takes no settings.
type Config struct{}

type misbehave struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = misbehave{}

func (misbehave) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (misbehave) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

func (service) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	mode, _ := req.Header("x-mode")
	switch mode {
	case "panic":
		panic("misbehave: asked to panic")
	case "hang":
		select {}
	case "bad-header":
		return pluginapi.Allow().WithRequestHeader("x-user", "alice\r\nx-admin: true"), nil
	case "crash":
		go func() { panic("misbehave: a panic on the plugin's own goroutine") }()
		select {}
	case "deny":
		return pluginapi.Deny(418, "no"), nil
	}
	return pluginapi.Allow().WithRequestHeader("x-mode-seen", "none"), nil
}

func main() {}
