package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/oauth2"

	"gatehouse.dev/gatehouse/pluginapi"
)

// callback finishes a login at callbackPath. Every check that needs no network comes
// first: the provider's error, the state against this browser's flow cookie, the
// flow's age, the issuer (RFC 9207) and single use of the state; only then is the code
// exchanged and the ID token verified.
func (st *Step) callback(ctx context.Context, req *pluginapi.AuthorizationRequest) *pluginapi.AuthorizationResponse {
	_, rawQuery, _ := strings.Cut(req.Path, "?")
	q, _ := url.ParseQuery(rawQuery)
	state := q.Get("state")
	var clear string
	if state != "" {
		clear = st.s.flowCookie(st.s.flowCookieName(state), "")
	}
	fail := func(status int, reason, why string) *pluginapi.AuthorizationResponse {
		st.log.Warn().Str("request_id", req.RequestID).Int("status", status).Str("reason", why).Msg("login callback refused")
		resp := deny(status, reason)
		if clear != "" {
			resp.WithAddedResponseHeader("set-cookie", clear)
		}
		return resp
	}
	if e := q.Get("error"); e != "" {
		return fail(http.StatusForbidden, "the identity provider did not grant the login ("+errorCode(e)+")", "provider error "+errorCode(e))
	}
	f, why := st.openFlow(req, state)
	if f == nil {
		return fail(http.StatusBadRequest, "this login is not valid in this browser; start again from the application", why)
	}
	if iss := q.Get("iss"); iss != st.s.issuer && (iss != "" || st.provider.meta.Load().ISSParameterSupported) {
		return fail(http.StatusBadRequest, "the login response came from another issuer", "iss mismatch")
	}
	code := q.Get("code")
	if code == "" {
		return fail(http.StatusBadRequest, "the login response has no code", "no code")
	}
	first, err := st.store.FirstUse(ctx, "state:"+state, flowTTL)
	switch {
	case err != nil:
		st.log.Error().Err(err).Str("request_id", req.RequestID).Msg("recording login state failed")
		return fail(http.StatusServiceUnavailable, "session store unavailable", "store error")
	case !first:
		return fail(http.StatusBadRequest, "this login was already completed; start again from the application", "state replayed")
	}
	sess, status, why := st.exchange(ctx, code, f)
	if sess == nil {
		return fail(status, http.StatusText(status)+": the login could not be completed", why)
	}
	cookie, err := st.store.Save(ctx, sess, "")
	if err != nil {
		st.log.Error().Err(err).Str("request_id", req.RequestID).Msg("saving session failed")
		return fail(http.StatusServiceUnavailable, "session store unavailable", "store error")
	}
	st.log.Info().Str("request_id", req.RequestID).Msg("login completed")
	return redirect(f.Return).
		WithAddedResponseHeader("set-cookie", st.s.sessionCookie(cookie)).
		WithAddedResponseHeader("set-cookie", clear)
}

// openFlow returns the login a state belongs to, or nil and why not.
func (st *Step) openFlow(req *pluginapi.AuthorizationRequest, state string) (*flow, string) {
	if state == "" {
		return nil, "no state"
	}
	cookies, _ := req.Header("cookie")
	name := st.s.flowCookieName(state)
	raw, ok := cookieValue(cookies, name)
	if !ok {
		return nil, "no flow cookie for this state"
	}
	plain, err := st.flows.open(raw, name)
	if err != nil {
		return nil, "flow cookie not valid"
	}
	var f flow
	if json.Unmarshal(plain, &f) != nil || subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) != 1 {
		return nil, "state does not match the flow cookie"
	}
	if age := st.now().Sub(time.Unix(f.Created, 0)); age > flowTTL || age < -clockSkew {
		return nil, "flow expired"
	}
	return &f, ""
}

// exchange trades the code for tokens (bounded by the request deadline in ctx) and
// verifies the ID token. On failure it returns the status to answer and why.
func (st *Step) exchange(ctx context.Context, code string, f *flow) (*Session, int, string) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, st.client)
	spanCtx, end := span(ctx, "oidc token exchange", attribute.String("oidc.issuer", st.s.issuer))
	tok, err := st.oauth2Config().Exchange(spanCtx, code, oauth2.VerifierOption(f.Verifier))
	end(err)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, http.StatusUnauthorized, "code rejected by the provider: " + errorCode(re.ErrorCode)
		}
		return nil, http.StatusServiceUnavailable, "provider unreachable for the code exchange"
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, http.StatusUnauthorized, "no id_token in the token response"
	}
	idt, err := st.verify(ctx, raw, f.Nonce)
	if err != nil {
		return nil, http.StatusUnauthorized, "id token rejected: " + err.Error()
	}
	now := st.now()
	return &Session{
		IDToken:      raw,
		AccessToken:  tok.AccessToken,
		RefreshToken: tok.RefreshToken,
		Expiry:       earliest(tok.Expiry, idt.Expiry),
		Created:      now,
	}, 0, ""
}

// errorCode keeps an OAuth error code printable and short: it comes from outside.
func errorCode(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '?'
	}, s)
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
