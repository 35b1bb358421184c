package oidc

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"gatehouse.dev/gatehouse/pluginapi"
)

// logout ends the session: it is removed from the store, its tokens are revoked where
// the provider supports it, the cookie is expired, and the browser goes to the
// provider's end-session endpoint (with id_token_hint) or to afterLogoutUrl.
func (st *Step) logout(ctx context.Context, req *pluginapi.AuthorizationRequest) *pluginapi.AuthorizationResponse {
	cookies, _ := req.Header("cookie")
	value, _ := cookieValue(cookies, st.s.cookieName)
	var sess *Session
	if value != "" {
		var err error
		sess, err = st.store.Load(ctx, value)
		if err != nil && !errors.Is(err, ErrNoSession) {
			st.log.Error().Err(err).Str("request_id", req.RequestID).Msg("loading session for logout failed")
		}
		if err := st.store.Clear(ctx, value); err != nil {
			// The cookie is still expired, but the stored session outlives it: say so.
			st.log.Error().Err(err).Str("request_id", req.RequestID).Msg("deleting session failed")
			return deny(http.StatusServiceUnavailable, "session store unavailable; the session could not be removed").
				WithAddedResponseHeader("set-cookie", st.s.sessionCookie(""))
		}
	}
	if sess != nil {
		st.revoke(ctx, req.RequestID, sess)
	}
	loc := st.s.afterLogoutURL
	if ep := st.provider.meta.Load().EndSessionEndpoint; ep != "" {
		q := url.Values{"client_id": {st.s.clientID}, "post_logout_redirect_uri": {st.s.afterLogoutURL}}
		if sess != nil {
			q.Set("id_token_hint", sess.IDToken)
		}
		sep := "?"
		if strings.Contains(ep, "?") {
			sep = "&"
		}
		loc = ep + sep + q.Encode()
	}
	st.log.Info().Str("request_id", req.RequestID).Bool("had_session", sess != nil).Msg("logout")
	return redirect(loc).WithAddedResponseHeader("set-cookie", st.s.sessionCookie(""))
}

// revoke revokes the refresh token (which ends the grant) and the access token at the
// provider's revocation endpoint (RFC 7009), within the request deadline. A failure
// is logged, not fatal: the session is already gone here.
func (st *Step) revoke(ctx context.Context, requestID string, s *Session) {
	ep := st.provider.meta.Load().RevocationEndpoint
	if ep == "" {
		return
	}
	for _, t := range []struct{ value, hint string }{{s.RefreshToken, "refresh_token"}, {s.AccessToken, "access_token"}} {
		if t.value == "" {
			continue
		}
		if err := st.revokeOne(ctx, ep, t.value, t.hint); err != nil {
			st.log.Warn().Err(err).Str("request_id", requestID).Str("token", t.hint).Msg("revoking token failed")
		}
	}
}

func (st *Step) revokeOne(ctx context.Context, ep, token, hint string) (err error) {
	body := url.Values{"token": {token}, "token_type_hint": {hint}}.Encode()
	ctx, end := span(ctx, "oidc token revocation", attribute.String("oidc.issuer", st.s.issuer))
	defer func() { end(err) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, strings.NewReader(body))
	if err != nil {
		return errors.New("building revocation request failed")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(st.s.clientID), url.QueryEscape(st.s.clientSecret))
	resp, err := st.client.Do(req)
	if err != nil {
		return errors.New("provider unreachable for revocation")
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("revocation answered " + resp.Status)
	}
	return nil
}
