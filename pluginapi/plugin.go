// Package pluginapi is the contract between Gatehouse and the auth plugins it hosts.
//
// A plugin is a Go package main built with `go build -buildmode=plugin`. It exports a
// variable whose value (or a pointer to it) implements ExtAuthPlugin:
//
//	package main
//
//	import "gatehouse.dev/gatehouse/pluginapi"
//
//	var Plugin pluginapi.ExtAuthPlugin = myPlugin{}
//
// For every AuthConfig step that names the plugin, Gatehouse:
//
//  1. calls NewConfigInstance and decodes the step's `config` object into the pointer it
//     returns (JSON field rules; unknown fields are errors);
//  2. calls GetAuthService with that pointer;
//  3. calls Start on the service with a context that is cancelled when the config is
//     replaced or the server stops, so background work can end;
//  4. calls Authorize for every request routed to the step's AuthConfig.
//
// This package imports only the standard library, so a plugin shares nothing with the
// host but Go itself and this package. Keep it that way: every package a plugin and
// the host share must be built from identical sources.
package pluginapi

import "context"

// ExtAuthPlugin is what a plugin exports.
type ExtAuthPlugin interface {
	// NewConfigInstance returns a pointer to a fresh, zero-valued config object. The
	// step's `config` is decoded into it.
	NewConfigInstance(ctx context.Context) (configInstance any, err error)
	// GetAuthService builds the service for one decoded config. Validate the config
	// here and return an error describing what is wrong; the AuthConfig is then
	// rejected with that reason instead of serving.
	GetAuthService(ctx context.Context, configInstance any) (AuthService, error)
}

// AuthService authorizes requests for one configured step.
type AuthService interface {
	// Start is called once before the first Authorize. The context is cancelled when
	// the config is replaced or the server stops.
	Start(ctx context.Context) error
	// Authorize decides one request. Return a denied response to deny; return an error
	// only for technical failures (the request is then denied with 500 and the error
	// is logged). Authorize must honour ctx: it carries the request deadline.
	Authorize(ctx context.Context, req *AuthorizationRequest) (*AuthorizationResponse, error)
}
