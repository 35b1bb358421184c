package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
)

// verify checks an ID token: signature with the provider's keys in hand (asymmetric
// algorithms only), issuer, audience, authorized party, expiry with clockSkew of
// leeway, and the login's nonce (skipped for refreshed tokens, nonce "").
func (st *Step) verify(ctx context.Context, raw, nonce string) (*gooidc.IDToken, error) {
	v := gooidc.NewVerifier(st.s.issuer, st.provider, &gooidc.Config{
		ClientID:             st.s.clientID,
		SupportedSigningAlgs: st.provider.algNames(),
		Now:                  func() time.Time { return st.now().Add(-clockSkew) },
	})
	t, err := v.Verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	if nonce != "" && subtle.ConstantTimeCompare([]byte(t.Nonce), []byte(nonce)) != 1 {
		return nil, errors.New("nonce does not match this login")
	}
	if len(t.Audience) > 1 {
		var c struct {
			AZP string `json:"azp"`
		}
		if err := t.Claims(&c); err != nil || c.AZP != st.s.clientID {
			return nil, errors.New("several audiences and azp is not this client")
		}
	}
	return t, nil
}
