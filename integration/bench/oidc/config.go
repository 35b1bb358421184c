package oidc

import (
	"os"
	"path/filepath"
	"strings"

	"gatehouse.dev/gatehouse/integration/harness"
)

// The OIDC AuthConfigs protect appOrigin. Nothing listens there: the bench plays both
// the browser and Envoy, sending gatehouse the Checks Envoy would send.
const (
	appOrigin     = "https://app.example.com"
	protectedPath = "/app/page"
	callbackPath  = "/callback"
)

// mode is one of the two AuthConfigs the OIDC phase loads: a session kept in an
// encrypted cookie, or in Redis under the handle the cookie holds.
type mode struct {
	name, configID, cookieName string
}

var modes = []mode{
	{name: "cookie", configID: "gatehouse-system.oidc-cookie", cookieName: "gatehouse_session"},
	{name: "redis", configID: "gatehouse-system.oidc-redis", cookieName: "gh_handle"},
}

// modeNames are the OIDC phase's workloads.
func modeNames() []string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.name
	}
	return names
}

// oidcConfigYAML is examples/oidc/authconfig.yaml and its Secrets, twice (the second
// with session.redis), for the given provider and Redis. The request timeout is the
// example's 2s because the code exchange happens inside one Check; the loaded Checks
// carry Envoy's 200ms deadline, which comes first, so it does not change them.
const oidcConfigYAML = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: oidc-cookie
  namespace: gatehouse-system
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: APP_ORIGIN
          callbackPath: CALLBACK_PATH
          logoutPath: /logout
          clientId: CLIENT_ID
          clientSecretRef: {name: oauth, namespace: gatehouse-system}
          issuerUrl: ISSUER
          scopes: [email]
          session:
            failOnFetchFailure: true
            cookieEncryptionKeyRef: {name: cookie-key, namespace: gatehouse-system}
          headers:
            idTokenHeader: x-id-token
            accessTokenHeader: x-access-token
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: oidc-redis
  namespace: gatehouse-system
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: APP_ORIGIN
          callbackPath: CALLBACK_PATH
          logoutPath: /logout
          clientId: CLIENT_ID
          clientSecretRef: {name: oauth, namespace: gatehouse-system}
          issuerUrl: ISSUER
          scopes: [email]
          session:
            failOnFetchFailure: true
            cookieEncryptionKeyRef: {name: cookie-key, namespace: gatehouse-system}
            redis: {cookieName: gh_handle, options: {host: "REDIS_ADDR"}}
          headers:
            idTokenHeader: x-id-token
            accessTokenHeader: x-access-token
---
apiVersion: v1
kind: Secret
metadata:
  name: oauth
  namespace: gatehouse-system
type: extauth.gatehouse.dev/oauth
stringData:
  client-secret: CLIENT_SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: cookie-key
  namespace: gatehouse-system
type: Opaque
stringData:
  cookie-encryption-key: 6f1c3e0a9b2d4f5e8a7c6b5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f
---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata:
  name: default
  namespace: gatehouse-system
spec:
  extauth:
    requestTimeout: 2s
`

// writeOIDCConfig writes the OIDC resources into a new folder under dir.
func writeOIDCConfig(dir, issuer, redisAddr string) (string, error) {
	out := filepath.Join(dir, "oidc-config")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	doc := strings.NewReplacer(
		"APP_ORIGIN", appOrigin,
		"CALLBACK_PATH", callbackPath,
		"CLIENT_ID", harness.ClientID,
		"CLIENT_SECRET", harness.ClientSecret,
		"ISSUER", issuer,
		"REDIS_ADDR", redisAddr,
	).Replace(oidcConfigYAML)
	return out, os.WriteFile(filepath.Join(out, "oidc.yaml"), []byte(doc), 0o644)
}
