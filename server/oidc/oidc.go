// Package oidc is the built-in OpenID Connect authorization-code login step.
package oidc

import (
	"context"
	"errors"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server/chain"
)

// New builds the step for one oauth2.oidcAuthorizationCode config. ctx is cancelled
// when the config is replaced.
func New(ctx context.Context, cfg *extauthv1.OidcAuthorizationCode) (chain.Step, error) {
	return nil, errors.New("oauth2.oidcAuthorizationCode: not supported yet")
}
