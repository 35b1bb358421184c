package oidc_test

import (
	"context"
	"testing"

	"github.com/go-jose/go-jose/v4"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/integration/harness"
	"gatehouse.dev/gatehouse/pluginapi"
)

// BenchmarkAuthorizeValidSession measures Authorize for a request that carries a
// valid session: the cost every authenticated request pays.
func BenchmarkAuthorizeValidSession(b *testing.B) {
	op := newFakeOP(b)
	for _, mode := range []string{"cookie", "redis"} {
		b.Run(mode, func(b *testing.B) {
			cfg := fakeConfig(op)
			if mode == "redis" {
				r := harness.StartRedis(b)
				cfg.Session.Redis = &extauthv1.OidcAuthorizationCode_Session_Redis{Host: r.Addr}
			}
			st := newStep(b, cfg)
			cb := op.login(b, st, func(n string) string { return sign(b, op.key, jose.RS256, "k1", op.claims(n)) })
			cookie := cookiePairs(b, cb.ResponseHeaderValues["set-cookie"]) + "; theme=dark; other=1"
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req := &pluginapi.AuthorizationRequest{Method: "GET", Path: "/page", Headers: map[string]string{"cookie": cookie, "accept": "text/html"}}
				resp, err := st.Authorize(ctx, req)
				if err != nil || !resp.Allowed {
					b.Fatalf("not allowed: %+v %v", resp, err)
				}
			}
		})
	}
}
