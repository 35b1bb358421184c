package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/oidc"
)

// fakeOP is a minimal provider for the cases a real one will not produce: its token
// endpoint answers with whatever ID token the test minted. Flow tests use the real
// oidc-provider (integration/).
type fakeOP struct {
	*httptest.Server
	key   *rsa.PrivateKey
	mu    sync.Mutex
	token func(nonce string) string // ID token for the next exchange
	nonce string
}

const fakeClient = "client-1"

func newFakeOP(t testing.TB) *fakeOP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	op := &fakeOP{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": op.URL, "authorization_endpoint": op.URL + "/auth", "token_endpoint": op.URL + "/token",
			"jwks_uri": op.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"},
			"authorization_response_iss_parameter_supported": true, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		mint, nonce := op.token, op.nonce
		op.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": "at-" + r.FormValue("code"), "token_type": "Bearer", "expires_in": 3600,
			"refresh_token": "rt-1", "id_token": mint(nonce),
		})
	})
	op.Server = httptest.NewServer(mux)
	t.Cleanup(op.Close)
	return op
}

// claims are valid ID-token claims for this provider and the login's nonce.
func (op *fakeOP) claims(nonce string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": op.URL, "sub": "alice", "aud": fakeClient, "nonce": nonce, "email": "alice@example.test",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

// sign signs claims as a JWT with key, kid and alg.
func sign(t testing.TB, key any, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unsigned is a JWT with "alg": "none".
func unsigned(claims map[string]any) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": "k1"})
	p, _ := json.Marshal(claims)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(p) + "."
}

func fakeConfig(op *fakeOP) *extauthv1.OidcAuthorizationCode {
	return &extauthv1.OidcAuthorizationCode{
		AppUrl: "https://app.example.test", CallbackPath: "/callback", LogoutPath: "/logout",
		ClientId: fakeClient, ClientSecret: "client-secret-value", IssuerUrl: op.URL,
		Headers: &extauthv1.OidcAuthorizationCode_Headers{IdTokenHeader: "x-id-token"},
		Session: &extauthv1.OidcAuthorizationCode_Session{CookieEncryptionKey: make([]byte, 32)},
	}
}

func newStep(t testing.TB, cfg *extauthv1.OidcAuthorizationCode) chain.Step {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := oidc.New(ctx, cfg, oidc.Options{})
	if err != nil {
		t.Fatalf("oidc.New: %v", err)
	}
	return st
}

func authorize(t testing.TB, st chain.Step, path, cookie string) *pluginapi.AuthorizationResponse {
	t.Helper()
	h := map[string]string{"accept": "text/html"}
	if cookie != "" {
		h["cookie"] = cookie
	}
	resp, err := st.Authorize(context.Background(), &pluginapi.AuthorizationRequest{Method: "GET", Path: path, Headers: h})
	if err != nil {
		t.Fatalf("Authorize(%s): %v", path, err)
	}
	return resp
}

// cookiePairs turns Set-Cookie values into a Cookie header of the live ones.
func cookiePairs(t testing.TB, setCookies []string) string {
	t.Helper()
	var pairs []string
	for _, sc := range setCookies {
		c, err := http.ParseSetCookie(sc)
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxAge >= 0 && c.Value != "" {
			pairs = append(pairs, c.Name+"="+c.Value)
		}
	}
	return strings.Join(pairs, "; ")
}

// login starts a login at the step, has the fake provider answer the exchange with the
// ID token mint makes, and returns the callback's response.
func (op *fakeOP) login(t testing.TB, st chain.Step, mint func(nonce string) string) *pluginapi.AuthorizationResponse {
	t.Helper()
	start := authorize(t, st, "/page", "")
	loc, err := url.Parse(start.ResponseHeaders["location"])
	if err != nil || start.StatusCode() != http.StatusFound {
		t.Fatalf("login start: %+v", start)
	}
	op.mu.Lock()
	op.token, op.nonce = mint, loc.Query().Get("nonce")
	op.mu.Unlock()
	q := url.Values{"code": {"code-1"}, "state": {loc.Query().Get("state")}, "iss": {op.URL}}
	return authorize(t, st, "/callback?"+q.Encode(), cookiePairs(t, start.ResponseHeaderValues["set-cookie"]))
}
