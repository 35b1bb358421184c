package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestCreateSecretRefusesNamesThatAreNotKubernetesNames: --name a/b failed with an
// error about a temporary file, and --name ../../escape was written outside the
// resource folder's naming. Names are checked as decoding checks them, first.
func TestCreateSecretRefusesNamesThatAreNotKubernetesNames(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, ns, want string }{
		{"a/b", "gatehouse-system", `create secret: name "a/b" is not valid`},
		{"../../escape", "gatehouse-system", `create secret: name "../../escape" is not valid`},
		{"app", "../..", `create secret: namespace "../.." is not valid`},
	} {
		code, err := runWith([]string{"create", "secret", "oauth", "--name", tc.name, "--namespace", tc.ns, "--resources", dir, "--client-secret", "s3cr3t"}, io.Discard, io.Discard)
		if code != 2 || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("--name %q --namespace %q: exit %d, %v; want 2 and %q", tc.name, tc.ns, code, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files were written: %v", entries)
	}
	if code, err := runWith([]string{"create", "secret", "oauth", "--name", "app", "--resources", dir, "--client-secret", "s3cr3t"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("a valid name: exit %d, %v", code, err)
	}
}

// TestExtauthStatusTakesAdmin: every verb names the admin address --admin; extauth
// status said --admin-address, which still works, deprecated.
func TestExtauthStatusTakesAdmin(t *testing.T) {
	for _, flag := range []string{"--admin", "--admin-address"} {
		code, err := runWith([]string{"extauth", "status", flag, "127.0.0.1:1"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "is the extauth admin server on 127.0.0.1:1?") {
			t.Errorf("%s: exit %d, %v", flag, code, err)
		}
	}
}
