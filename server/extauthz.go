// Package server is the Gatehouse extauth server: the Envoy ext_authz gRPC service,
// the registry of step chains it serves, and how chains are built from config.
package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// ConfigIDKey is the ext_authz context extension naming the AuthConfig of a route.
const ConfigIDKey = "config_id"

// Authorizer implements envoy.service.auth.v3.Authorization over a Registry.
type Authorizer struct {
	authv3.UnimplementedAuthorizationServer
	reg     *Registry
	log     zerolog.Logger
	metrics *Metrics
	// unknown logs denials for config_ids that do not serve, sampled: traffic to a
	// rejected AuthConfig would otherwise write a line per request. The metric counts
	// every one.
	unknown  zerolog.Logger
	inflight inflight
	ready    readiness // readiness.go
	// checkInfo is what interceptors are told about every Check, made once.
	checkInfo *grpc.UnaryServerInfo
	// observer, when set, hears of every decided Check (Observe).
	observer Observer
}

// NewAuthorizer returns the ext_authz service for reg. metrics may be nil.
func NewAuthorizer(reg *Registry, log zerolog.Logger, metrics *Metrics) *Authorizer {
	a := &Authorizer{reg: reg, log: log, metrics: metrics,
		unknown: log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
	a.checkInfo = &grpc.UnaryServerInfo{Server: a, FullMethod: authv3.Authorization_Check_FullMethodName}
	return a
}

// Check looks up the chain named by config_id, runs it and answers Envoy.
func (a *Authorizer) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	return a.check(ctx, req, nil)
}

// check is Check with the request's wire bytes when the caller has them (nil: encode).
func (a *Authorizer) check(ctx context.Context, req *authv3.CheckRequest, raw []byte) (*authv3.CheckResponse, error) {
	ar := authorizationRequest(req, raw)
	id, named := ar.ContextExtensions[ConfigIDKey]
	if !named {
		a.unknown.Warn().Str("request_id", ar.RequestID).
			Msg("the request has no config_id context extension; denying (set it on the route's ext_authz per-route config, or disable ext_authz there)")
		a.metrics.observe("", outcomeNoConfigID)
		a.decided(ctx, Decision{Request: req, Outcome: outcomeNoConfigID, Status: http.StatusForbidden})
		return checkResponse(pluginapi.Forbidden()), nil
	}
	c, ok := a.reg.Lookup(id)
	if !ok { // a config on its way is waited for (Registry.AwaitConfig)
		c, ok = a.reg.AwaitConfig(ctx, id)
	}
	if !ok {
		a.unknown.Warn().Str("config_id", id).Str("request_id", ar.RequestID).Msg("no auth config with this config_id is serving; denying")
		a.metrics.observe(id, outcomeUnknownConfig)
		a.decided(ctx, Decision{Request: req, ConfigID: id, Outcome: outcomeUnknownConfig, Status: http.StatusForbidden})
		return checkResponse(pluginapi.Forbidden()), nil
	}
	// Counted only for serving ids, so made-up ids cannot grow the map.
	n := a.inflight.add(id)
	defer n.Add(-1)
	out := c.Run(ctx, ar)
	var outcome string
	switch {
	case out.Err != nil:
		a.logFailure(id, ar.RequestID, out)
		outcome = failureOutcome(out.Err)
	case out.Response.Allowed:
		outcome = outcomeAllowed
	default:
		if e := a.log.Debug(); e.Enabled() {
			e.Str("config_id", id).Str("request_id", ar.RequestID).Str("step", out.Step).
				Int("status", out.Response.StatusCode()).Msg("denied")
		}
		outcome = outcomeDenied
	}
	a.metrics.observe(id, outcome)
	if a.observer != nil {
		status := http.StatusOK
		if !out.Response.Allowed {
			status = out.Response.StatusCode()
		}
		a.observer.Decided(ctx, Decision{Request: req, ConfigID: id, Outcome: outcome, Step: out.Step, Status: status, Err: out.Err})
	}
	resp := checkResponse(out.Response) // copies the headers out of out.Response
	out.Release()
	return resp, nil
}

func (a *Authorizer) logFailure(id, requestID string, out chain.Outcome) {
	ev := a.log.Error().Str("config_id", id).Str("request_id", requestID).Str("step", out.Step).Err(out.Err).
		Int("status", http.StatusInternalServerError)
	var pe *chain.PanicError
	if errors.As(out.Err, &pe) {
		ev = ev.Bytes("stack", pe.Stack)
	}
	ev.Msg("step failed; denying")
}

func failureOutcome(err error) string {
	var pe *chain.PanicError
	switch {
	case errors.As(err, &pe):
		return outcomePanic
	case chain.IsDeadline(err):
		return outcomeDeadline
	}
	return outcomeError
}
