package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"

	"gatehouse.dev/gatehouse/pluginapi"
)

// ConfigError is a step config the plugin's config type does not accept.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return "config: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// NewService builds the AuthService for one step: NewConfigInstance, a strict decode
// of config (JSON; unknown fields are errors) into the instance, then GetAuthService.
// Panics in plugin code come back as errors.
func NewService(ctx context.Context, p pluginapi.ExtAuthPlugin, config []byte) (svc pluginapi.AuthService, err error) {
	defer recoverInto(&err, "plugin")
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

// DecodeConfig decodes config strictly into inst, which must be a non-nil pointer.
func DecodeConfig(inst any, config []byte) error {
	v := reflect.ValueOf(inst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return &ConfigError{fmt.Errorf("NewConfigInstance returned %T; it must return a non-nil pointer (for example &Config{}) for the config to be decoded into", inst)}
	}
	if len(bytes.TrimSpace(config)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(inst); err != nil {
		return &ConfigError{describeDecode(err, v.Elem().Type())}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ConfigError{errors.New("trailing data after the config object")}
	}
	return nil
}

func describeDecode(err error, t reflect.Type) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q: got %s, want %s", te.Field, te.Value, te.Type)
	}
	// encoding/json reports unknown fields as `json: unknown field "X"`; keep the name,
	// drop the prefix and say which type was decoded into.
	msg := err.Error()
	const prefix = "json: "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	return fmt.Errorf("%s (config type %s)", msg, t)
}

// Start calls svc.Start, turning a panic into an error.
func Start(ctx context.Context, svc pluginapi.AuthService) (err error) {
	defer recoverInto(&err, "Start")
	if err := svc.Start(ctx); err != nil {
		return fmt.Errorf("Start: %w", err)
	}
	return nil
}

func recoverInto(err *error, where string) {
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
