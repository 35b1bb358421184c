package controlplane_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/state"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// A control plane SIGKILLed while everything serves, restarted after an AuthConfig
// file got a misspelt field and the VirtualService a reference to a missing Upstream:
// both keep their last accepted versions, as after a live edit, so the open route, the
// secured route and its policy all keep working, and the VirtualService is Rejected.
// Without the state file the restart withdrew the VirtualService (every request 404)
// and extauth dropped the AuthConfig.
func TestARestartKeepsServingWhatBecameInvalidMeanwhile(t *testing.T) {
	s := startSystem(t, "alpha")
	s.expect(t, "/", alpha, http.StatusOK)
	s.waitRemembered(t, "AuthConfig", "plugin-auth")

	s.cp.Kill()
	misspelt := strings.Replace(authConfig("plugin-auth", "required_header", "gamma"), "exportedSymbolName", "exportedSymbolNam", 1)
	testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), misspelt)
	testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), strings.Replace(virtualService("default", `["*"]`, "/extra"), "name: echo,", "name: missing,", 1))
	s.startControlPlane(t)

	reasons := s.expectStatus(t, "VirtualService", "default", "Rejected", "gatehouse")
	if !strings.Contains(strings.Join(reasons, "\n"), "keeps serving") {
		t.Errorf("VirtualService reasons %q do not say the last accepted version keeps serving", reasons)
	}
	s.expectCaughtUp(t)
	s.expect(t, "/public/x", nil, http.StatusOK)
	s.expect(t, "/", alpha, http.StatusOK) // the remembered policy, not the misspelt file's
	s.expect(t, "/", gamma, http.StatusForbidden)
	s.expect(t, "/extra", nil, http.StatusForbidden) // the rejected version's route is not served

	// Fixing both files serves the new versions.
	testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "gamma"))
	testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), virtualService("default", `["*"]`, "/extra"))
	s.expect(t, "/extra", nil, http.StatusOK)
	s.expect(t, "/", gamma, http.StatusOK)
	s.expect(t, "/", alpha, http.StatusForbidden)
}

// A resource defined in two files keeps the definition that served, across a restart
// too: without the state file the restart took the first file in name order, and the
// policy in force changed with no edit.
func TestADuplicateKeepsTheDefinitionThatServedAcrossARestart(t *testing.T) {
	s := startSystem(t, "alpha")
	s.expect(t, "/", alpha, http.StatusOK)
	testbin.WriteFile(t, filepath.Join(s.dir, "0-copy.yaml"), authConfig("plugin-auth", "required_header", "gamma")) // sorts first
	s.waitRemembered(t, "AuthConfig", "plugin-auth")
	s.expect(t, "/", alpha, http.StatusOK)
	s.expect(t, "/", gamma, http.StatusForbidden)

	s.cp.Kill()
	s.startControlPlane(t)
	s.expectCaughtUp(t)
	s.expect(t, "/", alpha, http.StatusOK)
	s.expect(t, "/", gamma, http.StatusForbidden)
}

// waitRemembered waits until the state file of the system's control plane remembers
// kind name (it is written in the background after a run).
func (s *system) waitRemembered(t *testing.T, kind, name string) {
	t.Helper()
	path, err := state.DefaultPath(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	testbin.Eventually(t, settle, func() error {
		mem, err := (&state.File{Path: path, Root: s.dir}).Load()
		if err != nil {
			return err
		}
		for _, apiVersion := range []string{"enterprise.gateway.gatehouse.dev/v1", "gateway.gatehouse.dev/v1"} {
			if _, ok := mem.Origin(source.Key{APIVersion: apiVersion, Kind: kind, Namespace: "gatehouse-system", Name: name}); ok {
				return nil
			}
		}
		return fmt.Errorf("%s: %s %s not remembered yet", path, kind, name)
	})
}

// expectCaughtUp waits until the gateway and extauth hold streams to the (restarted)
// control plane and have answered everything it sent them: what they serve from then
// on is what it sent.
func (s *system) expectCaughtUp(t *testing.T) {
	t.Helper()
	testbin.Eventually(t, settle, func() error {
		_, body, err := testbin.Get("http://" + s.admin + "/snapshots/xds")
		if err != nil {
			return err // the admin server opens just after xDS
		}
		for _, role := range []string{xds.DefaultProxyRole, xds.RoleExtauth} {
			i := strings.Index(body, `"role": "`+role+`"`)
			if i < 0 {
				return fmt.Errorf("no %s client yet", role)
			}
			rest := body[i:]
			if end := strings.Index(rest, "}"); end > 0 && strings.Contains(rest[:end], "unanswered") {
				return fmt.Errorf("%s has not answered everything yet", role)
			}
		}
		return nil
	})
}
