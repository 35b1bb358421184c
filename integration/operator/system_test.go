package operator_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// system is a control plane with an extauth server and a gateway following it.
type system struct {
	*controlPlane
	extauth, gateway *testbin.Process
	gatewayListen    string
}

// startSystem runs a control plane on dir, then `gatehouse extauth --xds` and `gatehouse
// gateway --xds` following it, and waits until both are connected.
func startSystem(t *testing.T, dir string, gatewayArgs ...string) *system {
	t.Helper()
	s := &system{controlPlane: startControlPlane(t, dir), gatewayListen: testbin.FreeAddr(t)}
	bin := testbin.Gatehouse(t)
	s.extauth = testbin.Start(t, nil, bin, "extauth", "--xds", s.xds, "--plugin-dir", testbin.SamplePlugins(t), "--listen", testbin.FreeAddr(t))
	s.gateway = testbin.Start(t, nil, bin, append([]string{"gateway", "--xds", s.xds, "--role", xds.DefaultProxyRole,
		"--listen", s.gatewayListen, "--https-listen", ""}, gatewayArgs...)...)
	return s
}

// normalize replaces what changes between runs: the resource folder, the plugin
// folder and node ids ("<hostname>-<pid>").
func normalize(t *testing.T, s, dir string) string {
	t.Helper()
	s = strings.ReplaceAll(s, dir, "$RESOURCES")
	s = strings.ReplaceAll(s, testbin.SamplePlugins(t), "$PLUGINS")
	host, _ := os.Hostname()
	return regexp.MustCompile(regexp.QuoteMeta(host)+`-\d+`).ReplaceAllString(s, "$$NODE")
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// goldenEqual reports whether got equals testdata/name.
func goldenEqual(t *testing.T, name, got string) bool {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", name))
	return err == nil && string(want) == got
}
