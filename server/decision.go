package server

import (
	"context"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
)

// Decision is what one Check decided, as an Observer hears of it.
type Decision struct {
	// Request is the CheckRequest as Envoy sent it (the steps' header changes are not
	// in it).
	Request  *authv3.CheckRequest
	ConfigID string
	// Outcome is the checks_total label: allowed, denied, unknown_config,
	// no_config_id, error, panic or deadline.
	Outcome string
	// Step is the step that denied or failed ("" when allowed or no chain ran).
	Step string
	// Status is the HTTP status of the answer (200 when allowed).
	Status int
	// Err is the step's technical failure, for error, panic and deadline.
	Err error
}

// Allowed says whether the request goes on to the upstream.
func (d *Decision) Allowed() bool { return d.Outcome == outcomeAllowed }

// Observer hears of every decided Check, on the Check's goroutine, before the answer
// goes back to Envoy; ctx is the Check's. It must not keep d.Request.
type Observer interface {
	Decided(ctx context.Context, d Decision)
}

// Observe has o told of every decided Check. Call it before the server serves.
func (a *Authorizer) Observe(o Observer) { a.observer = o }

// decided tells the observer, if any, what a Check decided.
func (a *Authorizer) decided(ctx context.Context, d Decision) {
	if a.observer != nil {
		a.observer.Decided(ctx, d)
	}
}
