package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// checkOIDCDeps fails at once, before anything is built or loaded, when the parts the
// OIDC benchmark runs are missing, and says what installs them.
func checkOIDCDeps(root string) error {
	var missing []string
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing = append(missing, "redis-server")
	}
	if _, err := os.Stat(filepath.Join(root, "integration", "oidcprovider", "node_modules", "oidc-provider", "package.json")); err != nil {
		missing = append(missing, "the OpenID provider (integration/oidcprovider/node_modules)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the OIDC benchmark needs %s: run `make deps` (or skip it with -oidc=false)", strings.Join(missing, " and "))
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("the OIDC benchmark needs node to run the OpenID provider: apt-get install -y nodejs (or skip it with -oidc=false)")
	}
	return nil
}
