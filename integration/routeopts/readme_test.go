// Package routeopts_test runs the README's "JWT claims and RBAC" session.
package routeopts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const settle = 20 * time.Second

// TestReadmeJWTRBACSession runs the session command by command: devidp and gatehouse dev
// in the background, each curl until it prints what the README shows. Addresses move
// to free ports (the example's Upstreams in a copy of the folder), nothing else changes.
func TestReadmeJWTRBACSession(t *testing.T) {
	root := testbin.Root(t)
	tmp := t.TempDir()
	gw, echo, idp, ex := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	port := func(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

	resources := filepath.Join(tmp, "jwt-rbac")
	if err := os.MkdirAll(resources, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "examples/jwt-rbac/*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer("port: 8090", "port: "+port(echo), "port: 9100", "port: "+port(idp)).Replace(string(data))
		if err := os.WriteFile(filepath.Join(resources, filepath.Base(f)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	devidp := filepath.Join(tmp, "devidp")
	build := exec.Command("go", "build", "-o", devidp, "./examples/jwt-rbac/devidp")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build devidp: %v\n%s", err, out)
	}
	replacer := strings.NewReplacer(
		"go run ./examples/jwt-rbac/devidp", devidp+" --listen "+idp,
		"bin/gatehouse", testbin.Gatehouse(t),
		"bin/plugins", tmp,
		"examples/jwt-rbac", resources,
		"localhost:8080", gw,
		"127.0.0.1:9100", idp,
	)
	ran := 0
	for _, st := range testbin.ConsoleSteps(testbin.ReadmeBlock(t, "<!-- jwt-rbac-session")) {
		cmd := replacer.Replace(st.Command)
		if bg, ok := strings.CutSuffix(cmd, " &"); ok {
			args := strings.Fields(bg)
			addr := idp
			if strings.HasSuffix(args[0], "gatehouse") {
				args = append(args, "--listen", gw, "--echo-listen", echo, "--extauth-listen", ex)
				addr = gw
			}
			p := testbin.Start(t, nil, args[0], args[1:]...)
			testbin.WaitTCP(t, p, addr, settle)
			ran++
			continue
		}
		testbin.Eventually(t, settle, func() error {
			c := exec.Command("bash", "-c", cmd)
			c.Dir = root
			out, err := c.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", st.Command, err, out)
			}
			if string(out) != st.Output {
				return fmt.Errorf("%s: printed %q, the README shows %q", st.Command, out, st.Output)
			}
			return nil
		})
		ran++
	}
	if ran != 6 {
		t.Fatalf("ran %d commands; the session has 6", ran)
	}
}
