package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/oauth2"

	"gatehouse.dev/gatehouse/pluginapi"
)

// session decides a request to a protected path: allow with the session's tokens in
// the configured headers, or start a login. It never allows without a session.
func (st *Step) session(ctx context.Context, req *pluginapi.AuthorizationRequest) *pluginapi.AuthorizationResponse {
	cookies, _ := req.Header("cookie")
	value, ok := cookieValue(cookies, st.s.cookieName)
	if !ok || value == "" {
		return st.login(req, false)
	}
	sess, err := st.store.Load(ctx, value)
	switch {
	case errors.Is(err, ErrNoSession):
		return st.login(req, true)
	case err != nil:
		st.log.Error().Err(err).Str("request_id", req.RequestID).Bool("fail_on_fetch_failure", st.s.failOnFetch).Msg("loading session failed")
		if st.s.failOnFetch {
			return deny(http.StatusServiceUnavailable, "session store unavailable")
		}
		return st.login(req, false)
	}

	resp := pluginapi.Allow()
	if now := st.now(); !now.Add(st.s.preExpiry).Before(sess.Expiry) {
		fresh, cookie, err := st.refresh.do(value, func() (*Session, string, error) {
			if !st.claimRefresh(ctx, sess, now) {
				return nil, "", errRefreshedElsewhere
			}
			return st.refreshSession(ctx, value, sess)
		})
		switch {
		case errors.Is(err, errRefreshedElsewhere):
			// Another replica refreshes these tokens; they serve until its
			// session reaches this one.
		case err == nil:
			sess = fresh
			if cookie != value {
				resp.WithResponseHeader("set-cookie", st.s.sessionCookie(cookie))
			}
		case now.Before(sess.Expiry):
			st.log.Warn().Err(err).Str("request_id", req.RequestID).Msg("refreshing tokens failed; using them until they expire")
		default:
			st.log.Info().Err(err).Str("request_id", req.RequestID).Msg("session expired")
			return st.login(req, true)
		}
	}

	if st.s.idTokenHeader != "" {
		resp.WithRequestHeader(st.s.idTokenHeader, sess.IDToken)
	}
	if st.s.accessHeader != "" {
		if sess.AccessToken != "" {
			resp.WithRequestHeader(st.s.accessHeader, sess.AccessToken)
		} else {
			resp.WithoutRequestHeader(st.s.accessHeader)
		}
	}
	if rest, removed := withoutCookies(cookies, st.s.ownCookie); removed && rest != "" {
		resp.WithRequestHeader("cookie", rest)
	} else if removed {
		resp.WithoutRequestHeader("cookie")
	}
	return resp
}

// refreshClaim is how long a replica's claim on a refresh holds others back.
const refreshClaim = 5 * time.Second

// errRefreshedElsewhere is a refresh another replica has claimed.
var errRefreshedElsewhere = errors.New("the refresh is another replica's")

// claimRefresh reports whether this replica is the one to spend sess's refresh token.
// Replicas sharing a store see a session enter the pre-expiry window together; the
// first to claim its refresh token refreshes, and the others keep its tokens, still
// valid, until the refreshed session reaches them (Redis tells them). Spending the
// token twice would give a second set of tokens, or fail where the provider rotates
// refresh tokens. Once the tokens have expired, or when the store cannot be asked,
// the replica refreshes anyway: it cannot serve expired tokens.
func (st *Step) claimRefresh(ctx context.Context, sess *Session, now time.Time) bool {
	left := sess.Expiry.Sub(now)
	if left <= 0 || sess.RefreshToken == "" {
		return true
	}
	// The claim lapses after refreshClaim: if its replica failed to refresh (the
	// provider unreachable), any replica tries again then, while the tokens serve.
	sum := sha256.Sum256([]byte(sess.RefreshToken))
	first, err := st.store.FirstUse(ctx, "refresh:"+hex.EncodeToString(sum[:]), min(left, refreshClaim))
	return err != nil || first
}

// refreshSession trades the refresh token for new tokens and stores them, returning
// the session and its (possibly new) cookie value.
func (st *Step) refreshSession(ctx context.Context, cookie string, old *Session) (*Session, string, error) {
	if old.RefreshToken == "" {
		return nil, "", errors.New("no refresh token")
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, st.client)
	spanCtx, end := span(ctx, "oidc token refresh", attribute.String("oidc.issuer", st.s.issuer))
	tok, err := st.oauth2Config().TokenSource(spanCtx, &oauth2.Token{RefreshToken: old.RefreshToken}).Token()
	end(err)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, "", fmt.Errorf("refresh rejected by the provider: %s", errorCode(re.ErrorCode))
		}
		return nil, "", errors.New("provider unreachable for the refresh")
	}
	sess := &Session{
		IDToken:      old.IDToken,
		AccessToken:  tok.AccessToken,
		RefreshToken: tok.RefreshToken,
		Expiry:       tok.Expiry,
		Created:      old.Created,
	}
	if raw, _ := tok.Extra("id_token").(string); raw != "" {
		idt, err := st.verify(ctx, raw, "")
		if err != nil {
			return nil, "", fmt.Errorf("refreshed id token rejected: %w", err)
		}
		sess.IDToken, sess.Expiry = raw, earliest(tok.Expiry, idt.Expiry)
	}
	value, err := st.store.Save(ctx, sess, cookie)
	if err != nil {
		return nil, "", err
	}
	return sess, value, nil
}
