package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// The control-plane section's resources: n VirtualServices (two routes each, /open
// open and / secured), n Upstreams and n AuthConfigs, one resource a file, as a user
// with one file per service would keep them. Service i is vs-NNNNN, up-NNNNN and
// ac-NNNNN in namespace cpNamespace; an edit rewrites one file with a new value.
const cpNamespace = "bench"

// Kind is one kind of resource the section edits.
type Kind string

const (
	KindAuthConfig     Kind = "AuthConfig"
	KindUpstream       Kind = "Upstream"
	KindVirtualService Kind = "VirtualService"
)

var Kinds = []Kind{KindAuthConfig, KindUpstream, KindVirtualService}

// file is where service i's resource of kind k lives.
func (k Kind) file(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%05d.yaml", strings.ToLower(string(k)), i))
}

// yaml is service i's resource of kind k; v varies its content (0 at first, then the
// number of the edit): the allowed header value, the upstream port, the open prefix.
func (k Kind) yaml(i, v int) string {
	switch k {
	case KindAuthConfig:
		return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: ac-%05[1]d
  namespace: %[2]s
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [v%[3]d]
`, i, cpNamespace, v)
	case KindUpstream:
		return fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata:
  name: up-%05[1]d
  namespace: %[2]s
spec:
  static:
    hosts:
      - addr: 10.%[3]d.%[4]d.%[5]d
        port: %[6]d
`, i, cpNamespace, i>>16&255, i>>8&255, i&255, 8000+v%50000)
	default:
		return fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata:
  name: vs-%05[1]d
  namespace: %[2]s
spec:
  virtualHost:
    domains: [vs-%05[1]d.example.com]
    routes:
      - matchers: [{prefix: /open-%[3]d}]
        routeAction: {single: {upstream: {name: up-%05[1]d, namespace: %[2]s}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: up-%05[1]d, namespace: %[2]s}}}
        options: {extauth: {configRef: {name: ac-%05[1]d, namespace: %[2]s}}}
`, i, cpNamespace, v)
	}
}

// id is the "<namespace>.<name>" of service i's resource of kind k, which names its
// ExtAuthConfig (AuthConfig) and its cluster and endpoints (Upstream).
func (k Kind) id(i int) string {
	prefix := map[Kind]string{KindAuthConfig: "ac", KindUpstream: "up", KindVirtualService: "vs"}[k]
	return fmt.Sprintf("%s.%s-%05d", cpNamespace, prefix, i)
}

// WatchedOverVHDS is the VHDS virtual host that shows an edit of service i's
// VirtualService while the route configuration routeConfig is served over VHDS.
func WatchedOverVHDS(i int, routeConfig string) (typ, name string) {
	return xds.VirtualHostType, xds.VirtualHostName(routeConfig, KindVirtualService.id(i))
}

// VHDSSettings turns Settings spec.virtualHostDiscovery on, written as file
// VHDSSettingsFile of the resources' folder.
const (
	VHDSSettingsFile = "settings-vhds.yaml"
	VHDSSettings     = `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  virtualHostDiscovery: true
`
)

// Watched is the type and name of the resource whose new version shows an edit of
// service i's resource of kind k, where routeConfig is the route configuration served.
func (k Kind) Watched(i int, routeConfig string) (typ, name string) {
	switch k {
	case KindAuthConfig:
		return xds.ExtAuthConfigType, k.id(i)
	case KindUpstream:
		return xds.EndpointType, translate.ClusterName(k.id(i))
	}
	return xds.RouteType, routeConfig
}

// extauthUpstreamYAML is the extauth server's Upstream, which every secured route's
// ext_authz filter points at (the default extauthzServerRef).
const extauthUpstreamYAML = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata:
  name: extauth
  namespace: gatehouse-system
spec:
  static:
    hosts:
      - addr: 127.0.0.1
        port: 8083
`

// WriteServices fills base/resources with n services' resources, saying so as
// section, and returns that folder.
func WriteServices(section, base string, n int) (string, error) {
	dir := filepath.Join(base, "resources")
	benchkit.Progress("%s: writing %d VirtualServices, Upstreams and AuthConfigs to %s", section, n, dir)
	return dir, WriteResources(dir, n)
}

// WriteResources fills dir with n services' resources.
func WriteResources(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "extauth.yaml"), []byte(extauthUpstreamYAML), 0o644); err != nil {
		return err
	}
	for i := range n {
		for _, k := range Kinds {
			if err := os.WriteFile(k.file(dir, i), []byte(k.yaml(i, 0)), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// EditResource rewrites service i's resource of kind k with value v, atomically (a
// hidden temporary file renamed over it), so the control plane never reads half a file.
func EditResource(dir string, k Kind, i, v int) error {
	tmp := filepath.Join(dir, ".edit.tmp")
	if err := os.WriteFile(tmp, []byte(k.yaml(i, v)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, k.file(dir, i))
}
