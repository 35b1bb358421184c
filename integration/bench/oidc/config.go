package oidc

import (
	_ "embed"
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

// oidcConfigYAML is the section's AuthConfigs and Secrets, with placeholders.
//
//go:embed oidc.yaml
var oidcConfigYAML string

// writeOIDCConfig writes the OIDC resources into dir/oidc-config, and makes the empty
// dir/no-plugins for gatehouse's --plugin-dir.
func writeOIDCConfig(dir, issuer, redisAddr string) (string, error) {
	out := filepath.Join(dir, "oidc-config")
	for _, d := range []string{out, filepath.Join(dir, "no-plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
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
