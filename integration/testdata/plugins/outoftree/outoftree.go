// Command outoftree is a plugin written outside the gatehouse tree, in a module of its
// own, the way plugin authors write them. It asks for a newer golang.org/x/sys than the
// gatehouse binary links; `gatehouse plugin build` pins it to the host's version.
//
// Build it with:
//
//	gatehouse plugin build --module . --out ./out --gatehouse-src /path/to/gatehouse
package main

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/sys/unix"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Config is the step's config.
type Config struct {
	// Prefix is the path prefix this step allows.
	Prefix string
}

type prefixPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = prefixPlugin{}

func (prefixPlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (prefixPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c := cfg.(*Config)
	if !strings.HasPrefix(c.Prefix, "/") {
		return nil, errors.New("outoftree: Prefix must start with /")
	}
	return service{prefix: c.Prefix}, nil
}

type service struct{ prefix string }

func (service) Start(context.Context) error { return nil }

func (s service) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if !strings.HasPrefix(req.Path, s.prefix) {
		return pluginapi.Forbidden(), nil
	}
	var u unix.Utsname
	_ = unix.Uname(&u)
	return pluginapi.Allow().WithRequestHeader("x-outoftree-host", unix.ByteSliceToString(u.Nodename[:])), nil
}

func main() {}
