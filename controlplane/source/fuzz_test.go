package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// FuzzReadAndDecode writes data as a resource file and reads it the way the directory
// source does (apiv1.ReadFile, then Decode): whatever it holds, the result is
// resources or problems, never a panic, a hang or a read past the size limit.
func FuzzReadAndDecode(f *testing.F) {
	f.Add([]byte("apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: u, namespace: ns}\nspec: {static: {hosts: [{addr: 127.0.0.1, port: 80}]}}\n"))
	f.Add([]byte("spec: " + strings.Repeat("[", 1000)))
	f.Add([]byte("kind: VirtualServce\n"))
	f.Add([]byte{0, 0xff, '\t'})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "r.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := apiv1.ReadFile(path, nil)
		if err != nil {
			return
		}
		if len(got) > apiv1.MaxFileBytes || string(got) != string(data) {
			t.Fatalf("read %d bytes of %d", len(got), len(data))
		}
		_, _ = source.Decode(got, path)
	})
}
