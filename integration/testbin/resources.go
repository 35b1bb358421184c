package testbin

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFile writes content to path beside it first (a dot file of the same folder) and
// renames it into place, as editors and kubelets do, so a process watching the folder
// never reads half a file.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Upstream is the YAML of a static Upstream gatehouse-system.<name> whose hosts are
// addrs ("host:port" each).
func Upstream(name string, addrs ...string) string {
	var hosts []string
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			panic(err)
		}
		hosts = append(hosts, fmt.Sprintf("{addr: %s, port: %s}", host, port))
	}
	return fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: %s, namespace: gatehouse-system}
spec:
  static:
    hosts: [%s]
`, name, strings.Join(hosts, ", "))
}
