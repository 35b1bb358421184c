// Command isolated is a test plugin for the isolation worker: the x-mode header makes
// it answer, crash the process from a goroutine of its own, or allocate without bound.
package main

import (
	"context"
	"encoding/hex"
	"os"
	"strconv"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

type isolatedPlugin struct{}

// Plugin is the exported symbol.
var Plugin pluginapi.ExtAuthPlugin = isolatedPlugin{}

// Config is empty.
type Config struct{}

func (isolatedPlugin) NewConfigInstance(context.Context) (any, error) { return &Config{}, nil }

func (isolatedPlugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return service{}, nil
}

type service struct{}

func (service) Start(context.Context) error { return nil }

// hold keeps what "alloc" allocates reachable.
var hold [][]byte

func (service) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	mode, _ := req.Header("x-mode")
	switch mode {
	case "goroutine-panic":
		go func() { panic("isolated: boom on a goroutine of its own") }()
	case "alloc":
		for ctx.Err() == nil {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			hold = append(hold, b)
		}
		return nil, ctx.Err()
	}
	if mode != "" {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
		}
	}
	raw, _ := req.Header("x-bytes")
	in, _ := req.State["in"].(string)
	req.State["out"] = "from " + in
	return pluginapi.Allow().
		WithRequestHeader("x-worker-pid", strconv.Itoa(os.Getpid())).
		WithRequestHeader("x-bytes-hex", hex.EncodeToString([]byte(raw))), nil
}

func main() {}
