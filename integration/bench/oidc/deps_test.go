package oidc

import (
	"strings"
	"testing"
)

func TestCheckOIDCDepsNamesTheFix(t *testing.T) {
	err := CheckDeps(t.TempDir()) // a root without integration/oidcprovider/node_modules
	if err == nil {
		t.Fatal("CheckDeps() = nil for a checkout without the OpenID provider's node_modules")
	}
	for _, want := range []string{"integration/oidcprovider/node_modules", "run `make deps`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDeps() = %q, want it to mention %q", err, want)
		}
	}
}
