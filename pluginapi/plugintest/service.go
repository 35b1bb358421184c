package plugintest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// DefaultTimeout bounds one Authorize call, as the server's default request timeout
// (Settings spec.extauth.requestTimeout) does.
const DefaultTimeout = 200 * time.Millisecond

// Service is a plugin's started AuthService for one config.
type Service struct {
	// Timeout bounds each Authorize call (DefaultTimeout when zero); past it the call
	// fails with context.DeadlineExceeded, as it would in the server.
	Timeout time.Duration
	svc     pluginapi.AuthService
}

// NewService does what the server does with a step: NewConfigInstance, a strict decode
// of config (JSON, as the step's `config` object) into its value, GetAuthService, then
// Start with ctx, which should be cancelled when the test ends. Its errors are the
// server's, word for word (`config: unknown field "X" (config type main.Config)`,
// `GetAuthService: …`, `plugin panicked: …`): test a rejected config against them.
func NewService(ctx context.Context, p pluginapi.ExtAuthPlugin, config string) (*Service, error) {
	svc, err := pluginhost.NewService(ctx, p, []byte(config))
	if err != nil {
		return nil, err
	}
	if err := pluginhost.Start(ctx, svc); err != nil {
		return nil, err
	}
	return &Service{svc: svc}, nil
}

// Start is NewService for a config that must work: it fails the test otherwise. The
// context Start gets is cancelled when the test ends.
func Start(t testing.TB, p pluginapi.ExtAuthPlugin, config string) *Service {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := NewService(ctx, p, config)
	if err != nil {
		t.Fatalf("plugintest: starting the plugin with config %s: %v", config, err)
	}
	return s
}

// DecodeConfig decodes config into a fresh value of p's config type exactly as the
// server does, and returns that value (the pointer NewConfigInstance returned).
func DecodeConfig(p pluginapi.ExtAuthPlugin, config string) (inst any, err error) {
	defer pluginhost.Recover(&err, "plugin")
	inst, err = p.NewConfigInstance(context.Background())
	if err != nil {
		return nil, fmt.Errorf("NewConfigInstance: %w", err)
	}
	if err := pluginhost.DecodeConfig(inst, []byte(config)); err != nil {
		return nil, err
	}
	return inst, nil
}

// Call runs Authorize on req as the server's chain does: on a goroutine of its own,
// with the timeout as deadline, a panic recovered into an error, and the answer checked
// with pluginhost.CheckResponse. It returns the answer, or the error that would make
// the server deny with 500.
func (s *Service) Call(req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if req.State == nil {
		req.State = map[string]any{}
	}
	type result struct {
		resp *pluginapi.AuthorizationResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("panic: %v", p)}
			}
			done <- r
		}()
		r.resp, r.err = s.svc.Authorize(ctx, req)
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("Authorize did not return within %s: %w", timeout, ctx.Err())
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.resp == nil:
		return nil, errors.New("returned neither a response nor an error")
	}
	if err := pluginhost.CheckResponse(r.resp, nil); err != nil {
		return nil, err
	}
	return r.resp, nil
}

// Authorize is Call, with the outcome wrapped for assertions.
func (s *Service) Authorize(t testing.TB, req *pluginapi.AuthorizationRequest) *Result {
	t.Helper()
	resp, err := s.Call(req)
	return &Result{t: t, Response: resp, Err: err}
}
