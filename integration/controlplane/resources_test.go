package controlplane_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// resources writes the YAML files of a small system into a new folder: an echo Upstream
// at echo, the extauth Upstream at extauth, the AuthConfig plugin-auth (the sample
// plugin, allowing x-required values allowed) and a VirtualService with /public open
// and / secured by plugin-auth.
func resources(t *testing.T, echo, extauth string, allowed string) string {
	t.Helper()
	dir := t.TempDir()
	testbin.WriteFile(t, filepath.Join(dir, "upstreams.yaml"), testbin.Upstream("echo", echo)+"---\n"+testbin.Upstream("extauth", extauth))
	testbin.WriteFile(t, filepath.Join(dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", allowed))
	testbin.WriteFile(t, filepath.Join(dir, "virtual_service.yaml"), virtualService("default", `["*"]`, "/extra-never-matched"))
	return dir
}

func authConfig(name, plugin, allowed string) string {
	return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth:
        name: %s
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [%s]}
`, name, plugin, allowed)
}

// virtualService routes /public (open), extra (open) and / (plugin-auth) to echo.
func virtualService(name, domains, extra string) string {
	return fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: %s, namespace: gatehouse-system}
spec:
  virtualHost:
    domains: %s
    routes:
      - matchers: [{prefix: /public}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
      - matchers: [{prefix: %s}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options:
          extauth: {configRef: {name: plugin-auth, namespace: gatehouse-system}}
`, name, domains, extra)
}
