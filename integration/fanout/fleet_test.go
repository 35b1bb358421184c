package fanout_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// services is how many VirtualServices, Upstreams and AuthConfigs the tests serve.
const services = 60

// plane is a control plane on a folder of services and a fleet connected to it.
type plane struct {
	t          *testing.T
	bin, dir   string
	state      string
	xds, admin string
	proc       *testbin.Process
	proxies    []*xdsfleet.Client
	extauths   []*xdsfleet.Client
}

// newPlane writes the services, starts the control plane and connects the fleet.
func newPlane(t *testing.T, proxies, extauths int) *plane {
	p := &plane{t: t, bin: testbin.Gatehouse(t), dir: t.TempDir(), xds: testbin.FreeAddr(t), admin: testbin.FreeAddr(t)}
	p.state = filepath.Join(t.TempDir(), "state")
	testbin.WriteFile(t, filepath.Join(p.dir, "extauth.yaml"), extauthUpstream)
	for i := range services {
		for kind := range files {
			testbin.WriteFile(t, p.file(kind, i), resourceYAML(kind, i, 0))
		}
	}
	p.start()
	for i := range proxies {
		p.proxies = append(p.proxies, p.connect(xds.DefaultProxyRole, fmt.Sprintf("proxy-%d", i)))
	}
	for i := range extauths {
		p.extauths = append(p.extauths, p.connect(xds.RoleExtauth, fmt.Sprintf("extauth-%d", i)))
	}
	return p
}

func (p *plane) start() {
	p.proc = testbin.Start(p.t, nil, p.bin, "controlplane", "--resources", p.dir, "--state", p.state,
		"--xds-listen", p.xds, "--admin-listen", p.admin, "--resources-debounce", "20ms", "--xds-stall-timeout", "2s")
	testbin.WaitTCP(p.t, p.proc, p.xds, 30*time.Second)
}

// connect starts a client; it is closed when the test ends.
func (p *plane) connect(role, node string) *xdsfleet.Client {
	c, err := xdsfleet.Start(context.Background(), p.xds, role, node, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(c.Close)
	return c
}

func (p *plane) all() []*xdsfleet.Client {
	return append(append([]*xdsfleet.Client(nil), p.proxies...), p.extauths...)
}

// complete says why c does not hold every resource of its role, or nil.
func complete(c *xdsfleet.Client) error {
	want := map[string]int{xds.ExtAuthConfigType: services}
	if c.Role != xds.RoleExtauth {
		want = map[string]int{xds.ClusterType: services + 1, xds.EndpointType: services + 1, xds.ListenerType: 1, xds.RouteType: 1}
	}
	for typ, n := range want {
		if got := c.Count(typ); got != n {
			return fmt.Errorf("%s holds %d of %s, want %d", c.Node, got, typ, n)
		}
	}
	if !c.Answered() {
		return fmt.Errorf("%s: its stream has not answered it yet", c.Node)
	}
	return nil
}

// sameAs says how c's versions differ from ref's, or nil: ref is a client of the same
// role that connected after the edits, so it holds what is served now.
func sameAs(c, ref *xdsfleet.Client) error {
	types := []string{xds.ExtAuthConfigType}
	if c.Role != xds.RoleExtauth {
		types = []string{xds.ClusterType, xds.EndpointType, xds.ListenerType, xds.RouteType}
	}
	for _, typ := range types {
		if got, want := c.Versions(typ), ref.Versions(typ); !maps.Equal(got, want) {
			return fmt.Errorf("%s: %s differs from a client connected now (%d against %d held)", c.Node, typ, len(got), len(want))
		}
	}
	return nil
}

// files are the file name of each kind of resource, and edited what an edit changes.
var files = map[string]string{"AuthConfig": "authconfig-%03d.yaml", "Upstream": "upstream-%03d.yaml", "VirtualService": "virtualservice-%03d.yaml"}

func (p *plane) file(kind string, i int) string {
	return filepath.Join(p.dir, fmt.Sprintf(files[kind], i))
}

// edit rewrites service i's resource of kind with value v, renamed into place.
func (p *plane) edit(kind string, i, v int) {
	testbin.WriteFile(p.t, p.file(kind, i), resourceYAML(kind, i, v))
}

// resourceYAML is service i's resource of kind, varied by v.
func resourceYAML(kind string, i, v int) string {
	name := fmt.Sprintf("%03d", i)
	y := map[string]string{
		"AuthConfig": `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ac-NNN, namespace: fleet}
spec:
  configs:
    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x-required, AllowedValues: [v{V}]}}
`,
		"Upstream": `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: up-NNN, namespace: fleet}
spec:
  static:
    hosts: [{addr: 10.0.0.1, port: {PORT}}]
`,
		"VirtualService": `apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: vs-NNN, namespace: fleet}
spec:
  virtualHost:
    domains: [vs-NNN.example.com]
    routes:
      - matchers: [{prefix: /open-{V}}]
        routeAction: {single: {upstream: {name: up-NNN, namespace: fleet}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: up-NNN, namespace: fleet}}}
        options: {extauth: {configRef: {name: ac-NNN, namespace: fleet}}}
`,
	}[kind]
	return strings.NewReplacer("NNN", name, "{V}", strconv.Itoa(v), "{PORT}", strconv.Itoa(8000+v)).Replace(y)
}

const extauthUpstream = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: 8083}]
`
