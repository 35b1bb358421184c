package server

import (
	"context"
	"errors"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// IsolationProcess is PluginAuth.isolation for a step run in a worker process.
const IsolationProcess = "process"

// Isolator starts process-isolated workers; *loader.Loader is one.
type Isolator interface {
	StartWorker(file, symbol string, config []byte, memoryLimit int64) (*loader.Worker, error)
}

// isolatedStep starts the step's worker; it is stopped when ctx ends (the chain is
// replaced or removed).
func (b *Builder) isolatedStep(ctx context.Context, p *extauthv1.PluginAuth, raw []byte) (chain.Step, error) {
	iso, ok := b.Plugins.(Isolator)
	if !ok {
		return nil, errors.New("isolation: process is not available in this server")
	}
	w, err := iso.StartWorker(p.GetPluginFileName(), p.GetExportedSymbolName(), raw, p.GetMemoryLimitBytes())
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, w.Close)
	return &IsolatedStep{name: "step/" + p.GetName(), file: p.GetPluginFileName(), w: w}, nil
}

// IsolatedStep runs a plugin in a worker process as a chain step: what the plugin
// cannot be stopped from doing in-process ends only its worker, and the step fails
// closed until the worker is back.
type IsolatedStep struct {
	name, file string
	w          *loader.Worker
}

// Name implements chain.Step.
func (s *IsolatedStep) Name() string { return s.name }

// File is the plugin file the step runs.
func (s *IsolatedStep) File() string { return s.file }

// Authorize implements chain.Step.
func (s *IsolatedStep) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return s.w.Authorize(ctx, req)
}
