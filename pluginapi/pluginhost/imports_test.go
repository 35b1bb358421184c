package pluginhost_test

import (
	"os/exec"
	"strings"
	"testing"
)

// pluginapi and its sub-packages are linked into plugins and into the plugin author's
// tests: they may import the standard library and each other, and nothing else, so a
// plugin shares nothing with the host but Go itself and these packages.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "gatehouse.dev/gatehouse/pluginapi/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "gatehouse.dev/gatehouse/pluginapi" && !strings.HasPrefix(p, "gatehouse.dev/gatehouse/pluginapi/") {
			t.Errorf("a pluginapi package imports %s; only the standard library is allowed", p)
		}
	}
}

// pluginapi itself is all a plugin must import from Gatehouse, and every package it
// imports is linked into every plugin and relinked on every rebuild of `gatehouse dev
// --plugin-module`. It once imported net/http for three status constants, which made
// the sample plugin 9.0 MB instead of 4.0 MB; the network packages stay out.
func TestPluginapiLinksNoNetworkPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "gatehouse.dev/gatehouse/pluginapi").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net" || strings.HasPrefix(p, "net/") || strings.HasPrefix(p, "crypto/") {
			t.Errorf("pluginapi imports %s (directly or not), which every plugin then links", p)
		}
	}
}
