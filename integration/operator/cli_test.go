package operator_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// checkDir writes a healthy resource set the extauth server can build: upstreams, the
// plugin AuthConfig, the Secrets and one VirtualService.
func checkDir(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	secrets, values := secretsYAML(t)
	writeFile(t, dir, "upstreams.yaml", upstreamsYAML)
	writeFile(t, dir, "auth_configs.yaml", pluginAuthYAML)
	writeFile(t, dir, "secrets.yaml", secrets)
	writeFile(t, dir, "virtual_services.yaml", virtualServiceYAML("default", "*", "echo"))
	return dir, values
}

// waitCheck polls `gatehouse check` until it exits with code.
func waitCheck(t *testing.T, admin string, code int, args ...string) string {
	t.Helper()
	var out string
	testbin.Eventually(t, settle, func() error {
		got, stdout, stderr := cli(t, "", append([]string{"check", "--admin", admin}, args...)...)
		out = stdout
		if got != code {
			return fmt.Errorf("check exited %d, want %d:\n%s%s", got, code, stdout, stderr)
		}
		return nil
	})
	return out
}

// TestCheck: `gatehouse check` on a healthy system, then on a broken one (a route to
// a missing upstream, a file that does not parse, a config extauth rejects), in text and
// JSON, with its exit codes.
func TestCheck(t *testing.T) {
	dir, secrets := checkDir(t)
	s := startSystem(t, dir)

	out := waitCheck(t, s.admin, 0)
	golden(t, "check_healthy.golden", normalize(t, out, dir))
	assertNoSecret(t, "check", out, secrets)
	_, jsonOut, _ := cli(t, "", "check", "--admin", s.admin, "-o", "json")
	var report struct {
		Healthy bool `json:"healthy"`
		Errors  int  `json:"errors"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &report); err != nil || !report.Healthy || report.Errors != 0 {
		t.Errorf("check -o json on a healthy system: %s (%v)", jsonOut, err)
	}

	writeFile(t, dir, "broken_route.yaml", virtualServiceYAML("broken", "broken.example.com", "missing"))
	writeFile(t, dir, "typo.yaml", "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: typo, namespace: x}\nspec: {statik: {}}\n")
	writeFile(t, dir, "rejected_by_extauth.yaml", strings.ReplaceAll(strings.ReplaceAll(pluginAuthYAML, "plugin-auth", "no-plugin"), "required_header", "no_such_plugin"))
	out = waitCheck(t, s.admin, 1)
	// Wait for the NACK too: it arrives after the control plane's own statuses, and a
	// client may be between a response and its answer for a moment.
	testbin.Eventually(t, settle, func() error {
		_, out, _ = cli(t, "", "check", "--admin", s.admin)
		if !strings.Contains(out, "Checking AuthConfigs... 1 Errors!") || strings.Contains(out, "has not ACKed") {
			return fmt.Errorf("no NACK in check yet:\n%s", out)
		}
		if !*update && !goldenEqual(t, "check_broken.golden", normalize(t, out, dir)) {
			return fmt.Errorf("check output not settled on the golden yet:\n%s", out)
		}
		return nil
	})
	golden(t, "check_broken.golden", normalize(t, out, dir))

	code, jsonOut, _ := cli(t, "", "check", "--admin", s.admin, "-o", "json")
	if err := json.Unmarshal([]byte(jsonOut), &report); err != nil || report.Healthy || report.Errors == 0 || code != 1 {
		t.Errorf("check -o json on a broken system: exit %d, %s (%v); want exit 1 and errors", code, jsonOut, err)
	}
	code, out, _ = cli(t, "", "check", "--admin", s.admin, "-x", "virtual-services,sources,auth-configs")
	if code != 0 || strings.Contains(out, "VirtualServices") {
		t.Errorf("check -x virtual-services,sources,auth-configs: exit %d\n%s", code, out)
	}
	if code, _, stderr := cli(t, "", "check", "--admin", s.admin, "-x", "nope"); code != 2 || !strings.Contains(stderr, `"nope" is not a check`) {
		t.Errorf("check -x nope: exit %d, %s", code, stderr)
	}
	if code, _, stderr := cli(t, "", "check", "--admin", testbin.FreeAddr(t)); code != 2 || !strings.Contains(stderr, "unreachable") {
		t.Errorf("check against nothing: exit %d, %s; want 2 and unreachable", code, stderr)
	}
}

// TestGet: the tables of `gatehouse get` (golden), one by name, and yaml output with
// the secrets redacted.
func TestGet(t *testing.T) {
	dir, secrets := healthyDir(t)
	writeFile(t, dir, "broken_route.yaml", virtualServiceYAML("broken", "broken.example.com", "missing"))
	cp := startControlPlane(t, dir)
	tests := []struct {
		name string
		args []string
	}{
		{"get_upstreams", []string{"get", "upstreams"}},
		{"get_virtualservice", []string{"get", "virtualservice"}},
		{"get_authconfig", []string{"get", "authconfig"}},
		{"get_virtualservice_broken", []string{"get", "vs", "broken"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := cli(t, "", append(tt.args, "--admin", cp.admin)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.name+".golden", out)
		})
	}
	for _, format := range []string{"yaml", "json"} {
		code, out, stderr := cli(t, "", "get", "authconfig", "oidc", "--admin", cp.admin, "-o", format)
		if code != 0 || !strings.Contains(out, "clientSecretRef") {
			t.Errorf("get authconfig oidc -o %s: exit %d %s\n%s", format, code, stderr, out)
		}
		assertNoSecret(t, "get -o "+format, out, secrets)
	}
	if code, _, stderr := cli(t, "", "get", "upstream", "nope", "--admin", cp.admin); code != 1 || !strings.Contains(stderr, `no Upstream named "nope"`) {
		t.Errorf("get upstream nope: exit %d %s", code, stderr)
	}
}

// TestCreateSecret: `create secret oauth` from stdin into the control plane's folder
// makes an AuthConfig that references it Accepted, and the control plane shows it
// redacted; --dry-run writes nothing; `create secret tls` checks the pair.
func TestCreateSecret(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "upstreams.yaml", upstreamsYAML)
	writeFile(t, dir, "auth_configs.yaml", oidcYAML)
	cp := startControlPlane(t, dir)
	waitState := func(kind, name, state string) {
		t.Helper()
		testbin.Eventually(t, settle, func() error {
			_, out, _ := cli(t, "", "get", kind, name, "--admin", cp.admin)
			if !strings.Contains(out, "| "+state) {
				return fmt.Errorf("%s %s not %s:\n%s", kind, name, state, out)
			}
			return nil
		})
	}
	waitState("authconfig", "oidc", "Rejected")

	const value = "created-client-secret-1234"
	code, out, stderr := cli(t, value+"\n", "create", "secret", "oauth", "--name", "oauth", "--namespace", "gatehouse-system", "--dry-run")
	if code != 0 || !strings.Contains(out, "client-secret: ") || !strings.Contains(out, "type: extauth.gatehouse.dev/oauth") {
		t.Fatalf("create secret oauth --dry-run: exit %d %s\n%s", code, stderr, out)
	}
	code, out, stderr = cli(t, value+"\n", "create", "secret", "oauth", "--name", "oauth", "--namespace", "gatehouse-system", "--resources", dir)
	if code != 0 || !strings.Contains(out, "Secret gatehouse-system.oauth written to ") {
		t.Fatalf("create secret oauth: exit %d %s\n%s", code, stderr, out)
	}
	waitState("authconfig", "oidc", "Accepted")
	_, input, _ := httpDo("GET", "http://"+cp.admin+"/snapshots/input", "")
	if !strings.Contains(input, `"client-secret": "<redacted>"`) {
		t.Errorf("the created Secret is not shown redacted in /snapshots/input")
	}
	assertNoSecret(t, "/snapshots/input", input, secretValues(value))
	_, xdsView, _ := httpDo("GET", "http://"+cp.admin+"/snapshots/xds", "")
	assertNoSecret(t, "/snapshots/xds", xdsView, secretValues(value))

	cert, key := certPair(t)
	tmp := t.TempDir()
	writeFile(t, tmp, "tls.crt", string(cert))
	writeFile(t, tmp, "tls.key", string(key))
	code, out, stderr = cli(t, "", "create", "secret", "tls", "--name", "tls", "--cert", tmp+"/tls.crt", "--key", tmp+"/tls.key", "--resources", dir)
	if code != 0 {
		t.Fatalf("create secret tls: exit %d %s %s", code, stderr, out)
	}
	testbin.Eventually(t, settle, func() error {
		_, in, _ := httpDo("GET", "http://"+cp.admin+"/snapshots/input", "")
		if !strings.Contains(in, `"tls.key": "<redacted>"`) {
			return fmt.Errorf("the TLS Secret is not in the input yet")
		}
		assertNoSecret(t, "/snapshots/input", in, secretValues(string(key)))
		return nil
	})
	if code, _, stderr := cli(t, "", "create", "secret", "tls", "--name", "bad", "--cert", tmp+"/tls.key", "--key", tmp+"/tls.key", "--dry-run"); code != 2 || !strings.Contains(stderr, "not a certificate and its key") {
		t.Errorf("create secret tls with a key as certificate: exit %d %s", code, stderr)
	}
}

// TestDebugAndVersion: `debug yaml` dumps the input redacted, `debug logs --errors-only`
// keeps the control plane's error lines, `version` shows both versions.
func TestDebugAndVersion(t *testing.T) {
	dir, secrets := healthyDir(t)
	writeFile(t, dir, "broken_route.yaml", virtualServiceYAML("broken", "broken.example.com", "missing"))
	cp := startControlPlane(t, dir)

	code, out, errOut := cli(t, "", "debug", "yaml", "--admin", cp.admin)
	if code != 0 || !strings.Contains(out, "client-secret: <redacted>") || !strings.Contains(out, "kind: VirtualService") {
		t.Errorf("debug yaml: exit %d %s\n%.500s", code, errOut, out)
	}
	assertNoSecret(t, "debug yaml", out, secrets)
	file := t.TempDir() + "/dump.yaml"
	if code, out, _ := cli(t, "", "debug", "yaml", "--admin", cp.admin, "-f", file); code != 0 || !strings.Contains(out, "written to "+file) {
		t.Errorf("debug yaml -f: exit %d %s", code, out)
	}

	logs := cp.proc.Output()
	code, out, _ = cli(t, logs, "debug", "logs", "--errors-only")
	if code != 0 || !strings.Contains(out, `"resource":"VirtualService gatehouse-system.broken"`) || strings.Contains(out, `"level":"info"`) {
		t.Errorf("debug logs --errors-only: exit %d\n%s", code, out)
	}
	logFile := t.TempDir() + "/cp.log"
	writeFile(t, filepath.Dir(logFile), filepath.Base(logFile), logs)
	if code, out, _ := cli(t, "", "debug", "logs", "-f", logFile); code != 0 || out != logs {
		t.Errorf("debug logs -f: exit %d, %d bytes, want the file's %d", code, len(out), len(logs))
	}

	code, out, _ = cli(t, "", "version", "--admin", cp.admin, "--strict")
	if code != 0 || !strings.Contains(out, "client: ") || !strings.Contains(out, "server: ") || !strings.Contains(out, "(control plane at "+cp.admin+")") {
		t.Errorf("version --strict: exit %d\n%s", code, out)
	}
}
