package pluginhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// ConfigError is a step config the plugin's config type does not accept.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return "config: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// DecodeConfig decodes config (JSON) strictly into inst, which must be a non-nil
// pointer: an unknown field, a value of the wrong type or anything after the object is
// an error. An empty config leaves inst as NewConfigInstance made it.
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
