package oidc_test

import (
	"context"
	"strings"
	"testing"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server/oidc"
)

func TestNewRejectsBadConfig(t *testing.T) {
	op := newFakeOP(t)
	tests := []struct {
		name  string
		tweak func(c *extauthv1.OidcAuthorizationCode)
		want  []string
	}{{
		name: "every field wrong",
		tweak: func(c *extauthv1.OidcAuthorizationCode) {
			c.AppUrl, c.CallbackPath, c.LogoutPath, c.ClientId = "app.example", "cb", "out", ""
			c.Session.CookieEncryptionKey = []byte("short")
		},
		want: []string{"step/oidc: ", "appUrl: must be an absolute", "callbackPath: must start with /", "logoutPath: must start with /",
			"clientId: is required", "cookieEncryptionKey: must be 32 bytes, not 5"},
	}, {
		name:  "issuer that is not the provider's",
		tweak: func(c *extauthv1.OidcAuthorizationCode) { c.IssuerUrl = op.URL + "/" },
		want:  []string{"step/oidc: provider " + op.URL + "/: discovery: the provider calls itself"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fakeConfig(op)
			tt.tweak(cfg)
			_, err := oidc.New(context.Background(), cfg, oidc.Options{})
			if err == nil {
				t.Fatal("New accepted the config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), cfg.ClientSecret) {
				t.Error("the error shows the client secret")
			}
		})
	}
}
