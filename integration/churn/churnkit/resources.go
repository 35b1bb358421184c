package churnkit

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// The resources of a run, all in namespace Namespace: route i is the VirtualService
// r-NNNNN for the host r-NNNNN.churn.test (every path), and, when secured, the
// AuthConfig a-NNNNN. Each resource is a file of its own.
const (
	Namespace = "churn"
	// KeyHeader is the header the required_header step reads; key v is "kv".
	KeyHeader = "x-key"
	// SwapPlugin is the plugin a quarter of the secured routes run after
	// required_header, whose .so the run replaces with a new version.
	SwapPlugin = "loadplugin"
	// Issuer is the JWT route's issuer.
	Issuer = "https://idp.churn.test"
)

// Host is route i's host.
func Host(i int) string { return fmt.Sprintf("r-%05d.churn.test", i) }

func vsFile(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("vs-r-%05d.yaml", i)) }
func acFile(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("ac-a-%05d.yaml", i)) }

// withPlugin reports whether route i's AuthConfig also runs SwapPlugin.
func withPlugin(i int) bool { return i%8 == 2 }

func authConfigYAML(i, v int) string {
	steps := fmt.Sprintf("    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: %s, AllowedValues: [k%d]}}\n", KeyHeader, v)
	if withPlugin(i) {
		steps += fmt.Sprintf("    - pluginAuth: {name: %s, exportedSymbolName: Plugin}\n", SwapPlugin)
	}
	return fmt.Sprintf("apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: a-%05d, namespace: %s}\nspec:\n  configs:\n%s", i, Namespace, steps)
}

func virtualServiceYAML(i int, s State) string {
	var opts string
	switch s.Kind {
	case Secured:
		opts = fmt.Sprintf("        options: {extauth: {configRef: {name: a-%05d, namespace: %s}}}\n", i, Namespace)
	case JWT:
		opts = fmt.Sprintf(`        options:
          jwt:
            providers:
              idp:
                issuer: %s
                tokenSource: {headers: [{header: authorization, prefix: "Bearer "}]}
                jwks: {remote: {url: http://jwks.churn.test/keys, upstreamRef: {name: echo, namespace: %s}}}
          extauth: {configRef: {name: a-%05d, namespace: %s}}
`, Issuer, Namespace, i, Namespace)
	}
	return fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: r-%05[1]d, namespace: %[2]s}
spec:
  virtualHost:
    domains: [%[3]s]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: %[2]s}}}
%[4]s`, i, Namespace, Host(i), opts)
}

func upstreamYAML(namespace, name string, addrs ...string) string {
	var hosts []string
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			panic(err)
		}
		hosts = append(hosts, fmt.Sprintf("{addr: %s, port: %s}", host, port))
	}
	return fmt.Sprintf("apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: %s, namespace: %s}\nspec:\n  static:\n    hosts: [%s]\n",
		name, namespace, strings.Join(hosts, ", "))
}

// settingsYAML gives ext_authz requestTimeout (a timeout is a 403, Envoy's
// status_on_error, which the judge would count as wrongly denied) and turns on virtual
// host discovery when vhds.
func settingsYAML(timeout string, vhds bool) string {
	return fmt.Sprintf("apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: default, namespace: gatehouse-system}\nspec:\n  extauth: {requestTimeout: %s}\n  virtualHostDiscovery: %t\n", timeout, vhds)
}

// writeFile writes beside and renames, so the control plane never reads half a file.
func writeFile(path, content string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeRoute writes route i's files for s: the AuthConfig before the VirtualService.
func writeRoute(dir string, i int, s State, vsToo bool) error {
	if s.Kind == Secured || s.Kind == JWT {
		if err := writeFile(acFile(dir, i), authConfigYAML(i, s.V)); err != nil {
			return err
		}
	}
	if !vsToo {
		return nil
	}
	return writeFile(vsFile(dir, i), virtualServiceYAML(i, s))
}

// removeRoute removes route i's files, the VirtualService first.
func removeRoute(dir string, i int) error {
	for _, f := range []string{vsFile(dir, i), acFile(dir, i)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
