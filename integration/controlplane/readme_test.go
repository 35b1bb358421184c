package controlplane_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3" // the Any in the bootstrap
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestReadmeControlPlaneSession runs the README's "Control plane" session command by
// command: the three processes in the background, each curl until it prints what the
// README shows (the edit takes a moment to arrive). Addresses are moved to free ports
// and /tmp to a test folder so the test can run beside others; nothing else changes.
func TestReadmeControlPlaneSession(t *testing.T) {
	readmeSession(t, "<!-- controlplane-session", nil)
}

// TestReadmeSecuringTheControlPlane runs the README's "Securing the control plane"
// session the same way, on the resources the session before it copied: a client is
// served what its certificate names, and one claiming another role is refused.
func TestReadmeSecuringTheControlPlane(t *testing.T) {
	first := testbin.ConsoleSteps(testbin.ReadmeBlock(t, "<!-- controlplane-session"))[0]
	if !strings.HasPrefix(first.Command, "cp -r examples/default ") {
		t.Fatalf("the control-plane session no longer starts by copying the resources: %q", first.Command)
	}
	readmeSession(t, "<!-- secure-session", []testbin.ConsoleStep{first})
}

// readmeSession runs the README session under marker (after the steps before), command
// by command: processes in the background, each other command until it prints what the
// README shows (a change takes a moment to arrive; a command whose shown output is an
// error may exit non-zero). Addresses are moved to free ports and /tmp to a test folder
// so the test can run beside others; nothing else changes.
func readmeSession(t *testing.T, marker string, before []testbin.ConsoleStep) {
	root := testbin.Root(t)
	tmp := t.TempDir()
	free := map[string]string{}
	for _, a := range []string{"127.0.0.1:9977", "127.0.0.1:9091", "127.0.0.1:8083", "127.0.0.1:8080", "127.0.0.1:8090"} {
		free[a] = testbin.FreeAddr(t)
	}
	port := func(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
	replacer := strings.NewReplacer(
		"/tmp/gatehouse-resources", filepath.Join(tmp, "resources"),
		"/tmp/gatehouse-certs", filepath.Join(tmp, "certs"),
		"bin/gatehouse", testbin.Gatehouse(t),
		"bin/plugins", testbin.SamplePlugins(t),
		"localhost:8080", free["127.0.0.1:8080"],
		"localhost:9091", free["127.0.0.1:9091"],
		"127.0.0.1:9977", free["127.0.0.1:9977"],
		"127.0.0.1:9091", free["127.0.0.1:9091"],
		"127.0.0.1:8083", free["127.0.0.1:8083"],
		"127.0.0.1:8080", free["127.0.0.1:8080"],
		"127.0.0.1:8090", free["127.0.0.1:8090"],
	)
	listens := regexp.MustCompile(`--(?:xds|listen) (\S+)`)
	for _, st := range append(before, testbin.ConsoleSteps(testbin.ReadmeBlock(t, marker))...) {
		cmd := replacer.Replace(st.Command)
		if bg, ok := strings.CutSuffix(cmd, " &"); ok {
			args := strings.Fields(bg)
			// Flags the README leaves at their defaults, moved to free ports.
			switch args[1] {
			case "controlplane":
				args = append(args, "--xds-listen", free["127.0.0.1:9977"])
				if !slices.Contains(args, "--admin-listen") {
					args = append(args, "--admin-listen", free["127.0.0.1:9091"])
				}
			case "gateway":
				args = append(args, "--https-listen", testbin.FreeAddr(t), "--admin-listen", testbin.FreeAddr(t))
			}
			p := testbin.Start(t, nil, args[0], args[1:]...)
			// The address the process serves on: the xDS address of the control plane,
			// the listen address of the others.
			addr := ""
			if args[1] == "controlplane" {
				addr = free["127.0.0.1:9977"]
			} else if m := listens.FindAllStringSubmatch(bg, -1); len(m) > 0 {
				addr = m[len(m)-1][1]
			}
			testbin.WaitTCP(t, p, addr, settle)
			continue
		}
		testbin.Eventually(t, settle, func() error {
			c := exec.Command("bash", "-c", cmd)
			c.Dir = root
			out, err := c.CombinedOutput()
			if err != nil && !strings.HasPrefix(st.Output, "gatehouse: ") {
				return fmt.Errorf("%s: %v\n%s", st.Command, err, out)
			}
			if string(out) != st.Output {
				return fmt.Errorf("%s: printed %q, the README shows %q", st.Command, out, st.Output)
			}
			return nil
		})
		if strings.HasPrefix(st.Command, "cp -r examples/default ") {
			// Point the copied Upstreams at the free ports the processes use.
			for _, f := range []string{"echo.yaml", "extauth.yaml"} {
				path := filepath.Join(tmp, "resources", f)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				s := strings.NewReplacer("port: 8090", "port: "+port(free["127.0.0.1:8090"]),
					"port: 8083", "port: "+port(free["127.0.0.1:8083"])).Replace(string(data))
				if s == string(data) {
					t.Fatalf("%s: no port to move", f)
				}
				if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestReadmeEnvoyBootstrap checks the README's Envoy bootstrap is one Envoy accepts:
// it decodes strictly into the bootstrap proto and passes its ValidateAll.
func TestReadmeEnvoyBootstrap(t *testing.T) {
	js, err := yaml.YAMLToJSON([]byte(testbin.ReadmeBlock(t, "<!-- envoy-bootstrap")))
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		t.Fatalf("README bootstrap: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("README bootstrap: %v", err)
	}
	if got := b.GetNode().GetMetadata().GetFields()["role"].GetStringValue(); got != "gatehouse-system~gateway-proxy" {
		t.Errorf("node metadata role = %q", got)
	}
}
