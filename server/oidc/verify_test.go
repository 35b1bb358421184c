package oidc_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// TestIDTokenVerification: the callback accepts only an ID token signed by the
// provider's key, for this client, from this issuer, unexpired, with the login's nonce.
func TestIDTokenVerification(t *testing.T) {
	op := newFakeOP(t)
	st := newStep(t, fakeConfig(op))
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := func(nonce string) map[string]any { return op.claims(nonce) }
	tests := []struct {
		name string
		mint func(nonce string) string
		want int
	}{{
		name: "valid token (control)",
		mint: func(n string) string { return sign(t, op.key, jose.RS256, "k1", good(n)) },
		want: http.StatusFound,
	}, {
		name: "wrong nonce",
		mint: func(n string) string {
			c := good(n)
			c["nonce"] = "another-login"
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusUnauthorized,
	}, {
		name: "no nonce",
		mint: func(n string) string { c := good(n); delete(c, "nonce"); return sign(t, op.key, jose.RS256, "k1", c) },
		want: http.StatusUnauthorized,
	}, {
		name: "wrong audience",
		mint: func(n string) string {
			c := good(n)
			c["aud"] = "another-client"
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusUnauthorized,
	}, {
		name: "several audiences without azp",
		mint: func(n string) string {
			c := good(n)
			c["aud"] = []string{fakeClient, "another-client"}
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusUnauthorized,
	}, {
		name: "wrong issuer",
		mint: func(n string) string {
			c := good(n)
			c["iss"] = "https://evil.example"
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusUnauthorized,
	}, {
		name: "expired token",
		mint: func(n string) string {
			c := good(n)
			c["exp"] = time.Now().Add(-2 * time.Minute).Unix()
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusUnauthorized,
	}, {
		name: "expired within the allowed clock skew",
		mint: func(n string) string {
			c := good(n)
			c["exp"] = time.Now().Add(-5 * time.Second).Unix()
			return sign(t, op.key, jose.RS256, "k1", c)
		},
		want: http.StatusFound,
	}, {
		name: "alg none",
		mint: func(n string) string { return unsigned(good(n)) },
		want: http.StatusUnauthorized,
	}, {
		name: "HS256 keyed with the public key",
		mint: func(n string) string {
			pub, _ := jose.JSONWebKey{Key: &op.key.PublicKey}.MarshalJSON()
			return sign(t, pub, jose.HS256, "k1", good(n))
		},
		want: http.StatusUnauthorized,
	}, {
		name: "unknown key id",
		mint: func(n string) string { return sign(t, otherKey, jose.RS256, "k2", good(n)) },
		want: http.StatusUnauthorized,
	}, {
		name: "known key id, another key",
		mint: func(n string) string { return sign(t, otherKey, jose.RS256, "k1", good(n)) },
		want: http.StatusUnauthorized,
	}, {
		name: "not a JWT",
		mint: func(string) string { return "garbage" },
		want: http.StatusUnauthorized,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := op.login(t, st, tt.mint)
			if got := resp.StatusCode(); got != tt.want || resp.Allowed {
				t.Fatalf("callback: status %d allowed %v, want %d", got, resp.Allowed, tt.want)
			}
			session := false
			for _, c := range resp.ResponseHeaderValues["set-cookie"] {
				session = session || strings.HasPrefix(c, "gatehouse_session=") && !strings.Contains(c, "Max-Age=0")
			}
			if session != (tt.want == http.StatusFound) {
				t.Errorf("session cookie set = %v, want %v", session, tt.want == http.StatusFound)
			}
		})
	}
}
