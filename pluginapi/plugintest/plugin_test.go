package plugintest_test

import (
	"context"
	"errors"
	"slices"
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// keyConfig is the config of keyPlugin, the plugin these tests run in-process.
type keyConfig struct {
	Header  string
	Allowed []string
	// Mode makes Authorize misbehave: "panic", "hang", "bad-header" or "nil".
	Mode string `json:",omitempty"`
}

type keyPlugin struct{}

func (keyPlugin) NewConfigInstance(context.Context) (any, error) { return &keyConfig{}, nil }

func (keyPlugin) GetAuthService(_ context.Context, cfg any) (pluginapi.AuthService, error) {
	c := cfg.(*keyConfig)
	if c.Header == "" {
		return nil, errors.New("keyplugin: Header is required")
	}
	return &keyService{c: c, release: make(chan struct{})}, nil
}

type keyService struct {
	c       *keyConfig
	release chan struct{}
	started context.Context
}

func (s *keyService) Start(ctx context.Context) error {
	s.started = ctx
	return nil
}

func (s *keyService) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	switch s.c.Mode {
	case "panic":
		panic("keyplugin: boom")
	case "hang":
		<-s.started.Done() // ignores the request's deadline
		return pluginapi.Allow(), nil
	case "bad-header":
		return pluginapi.Allow().WithRequestHeader("x-user", "alice\r\nx-admin: true"), nil
	case "nil":
		return nil, nil
	}
	v, _ := req.Header(s.c.Header)
	if !slices.Contains(s.c.Allowed, v) {
		return pluginapi.Deny(401, "keyplugin: "+s.c.Header+" missing or not allowed").
			WithResponseHeader("WWW-Authenticate", "Key").WithAddedResponseHeader("Set-Cookie", "a=1").
			WithAddedResponseHeader("Set-Cookie", "b=2"), nil
	}
	return pluginapi.Allow().WithRequestHeader("X-Key-Checked", "true").
		WithAppendedRequestHeader("x-trace", strings.ToUpper(v)).WithoutRequestHeader(s.c.Header), nil
}
