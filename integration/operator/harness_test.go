// Package operator_test runs the operator surfaces against real gatehouse processes:
// the control plane's admin endpoints, the CLI verbs and the gateway's proxy admin.
package operator_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// settle bounds how long a change may take to show; a polling deadline, not a figure.
const settle = 20 * time.Second

// controlPlane is a running `gatehouse controlplane` on free loopback ports.
type controlPlane struct {
	dir, xds, admin string
	proc            *testbin.Process
}

func startControlPlane(t *testing.T, dir string, env ...string) *controlPlane {
	t.Helper()
	cp := &controlPlane{dir: dir, xds: testbin.FreeAddr(t), admin: testbin.FreeAddr(t)}
	cp.proc = testbin.Start(t, env, testbin.Gatehouse(t), "controlplane", "--resources", dir,
		"--xds-listen", cp.xds, "--admin-listen", cp.admin)
	testbin.WaitTCP(t, cp.proc, cp.admin, settle)
	// The first snapshot is complete once the edge stage answers.
	testbin.Eventually(t, settle, func() error {
		code, body, err := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/health", "")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("GET /snapshots/health = %d: %s", code, body)
		}
		return err
	})
	return cp
}

func httpDo(method, url, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// writeFile writes beside and renames, as editors do, so the control plane never reads
// half a file.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// cli runs the gatehouse binary with args and stdin, and returns its exit code, stdout
// and stderr.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(testbin.Gatehouse(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gatehouse %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// assertNoSecret fails when out contains any of secrets.
func assertNoSecret(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows the secret value %.12q…", what, s)
		}
	}
}
