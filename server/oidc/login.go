package oidc

import (
	"encoding/hex"
	"encoding/json"
	"net/http"

	"golang.org/x/oauth2"

	"gatehouse.dev/gatehouse/pluginapi"
)

// flow is one login in progress, sealed into its flow cookie. Nothing of it is kept
// on the server, so any replica with the same cookie key can finish the login.
type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Return   string `json:"r"`
	Created  int64  `json:"c"`
}

// flowCookieName is the flow cookie of one state: a login per tab each gets its own.
func (s *settings) flowCookieName(state string) string {
	return s.flowCookiePrefx + hex.EncodeToString(digest("flow", state)[:8])
}

// login starts a login: a 302 to the provider's authorization endpoint and the flow
// cookie, or 401 for a request that cannot follow a redirect. staleCookie expires a
// session cookie that named no session.
func (st *Step) login(req *pluginapi.AuthorizationRequest, staleCookie bool) *pluginapi.AuthorizationResponse {
	if wantsNoRedirect(req) {
		resp := deny(http.StatusUnauthorized, "login required")
		if staleCookie {
			resp.WithAddedResponseHeader("set-cookie", st.s.sessionCookie(""))
		}
		return resp
	}
	f := flow{
		State:    randomString(32),
		Nonce:    randomString(32),
		Verifier: oauth2.GenerateVerifier(),
		Return:   st.s.returnURL(req.Path),
		Created:  st.now().Unix(),
	}
	plain, _ := json.Marshal(f) // only strings and an int: cannot fail
	name := st.s.flowCookieName(f.State)
	loc := st.oauth2Config().AuthCodeURL(f.State,
		oauth2.S256ChallengeOption(f.Verifier),
		oauth2.SetAuthURLParam("nonce", f.Nonce))
	resp := redirect(loc).WithAddedResponseHeader("set-cookie", st.s.flowCookie(name, st.flows.seal(plain, name)))
	if staleCookie {
		resp.WithAddedResponseHeader("set-cookie", st.s.sessionCookie(""))
	}
	return resp
}
