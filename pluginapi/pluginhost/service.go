package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"gatehouse.dev/gatehouse/pluginapi"
)

// NewService builds the AuthService for one step: NewConfigInstance, a strict decode
// of config (DecodeConfig) into the instance, then GetAuthService. Panics in plugin
// code come back as a *PanicError.
func NewService(ctx context.Context, p pluginapi.ExtAuthPlugin, config []byte) (svc pluginapi.AuthService, err error) {
	defer Recover(&err, "plugin")
	inst, err := p.NewConfigInstance(ctx)
	if err != nil {
		return nil, fmt.Errorf("NewConfigInstance: %w", err)
	}
	if err := DecodeConfig(inst, config); err != nil {
		return nil, err
	}
	svc, err = p.GetAuthService(ctx, inst)
	if err != nil {
		return nil, fmt.Errorf("GetAuthService: %w", err)
	}
	if svc == nil {
		return nil, errors.New("GetAuthService returned a nil AuthService")
	}
	return svc, nil
}

// Start calls svc.Start, turning a panic into a *PanicError.
func Start(ctx context.Context, svc pluginapi.AuthService) (err error) {
	defer Recover(&err, "Start")
	if err := svc.Start(ctx); err != nil {
		return fmt.Errorf("Start: %w", err)
	}
	return nil
}

// Recover turns a panic in plugin code into a *PanicError stored in *err; where names
// the call in the message ("NewConfigInstance panicked: …"). Defer it directly
// (`defer pluginhost.Recover(&err, "…")`): recover works only there.
func Recover(err *error, where string) {
	if p := recover(); p != nil {
		*err = &PanicError{Where: where, Value: p, Stack: debug.Stack()}
	}
}

// PanicError is a panic in plugin code, recovered. Error() omits the stack, which is
// kept for logs.
type PanicError struct {
	Where string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Where, e.Value) }
