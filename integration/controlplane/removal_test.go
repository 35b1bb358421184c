package controlplane_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// Removing the file of an AuthConfig that a VirtualService uses closes the routes it
// secures (extauth denies them) and keeps the VirtualService's open routes serving,
// with a Warning naming the reference. It withdrew the whole VirtualService before, so
// /public answered 404 too.
func TestRemovingAReferencedAuthConfigClosesOnlyItsRoutes(t *testing.T) {
	s := startSystem(t, "alpha")
	s.expect(t, "/", alpha, http.StatusOK)

	if err := os.Remove(filepath.Join(s.dir, "auth_config.yaml")); err != nil {
		t.Fatal(err)
	}
	reasons := s.expectStatus(t, "VirtualService", "default", "Warning", "gatehouse")
	if got := strings.Join(reasons, "\n"); !strings.Contains(got, "authconfig gatehouse-system.plugin-auth does not exist") || !strings.Contains(got, "denies") {
		t.Errorf("VirtualService reasons %q do not name the missing AuthConfig and what happens", reasons)
	}
	s.expect(t, "/", alpha, http.StatusForbidden)
	s.expect(t, "/public/x", nil, http.StatusOK)

	testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "alpha"))
	s.expectStatus(t, "VirtualService", "default", "Accepted", "gatehouse")
	s.expect(t, "/", alpha, http.StatusOK)
}
