package controlplane_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

var (
	alpha = map[string]string{"x-required": "alpha"}
	gamma = map[string]string{"x-required": "gamma"}
	wrong = map[string]string{"x-required": "nope"}
)

// TestControlPlaneEndToEnd: resources on disk reach extauth and the gateway over xDS,
// edits take effect live, a bad edit keeps the last good version serving, a config
// extauth cannot build is NACKed and shown in the status, and the data plane keeps
// serving through a control-plane crash and restart without allowing a request it
// should deny.
func TestControlPlaneEndToEnd(t *testing.T) {
	endToEnd(t, startSystem(t, "alpha, beta"), "extauth/")
}

// TestControlPlaneEndToEndOverMutualTLS runs the same with xDS over mutual TLS between
// the processes (certificates from `gatehouse certs generate`): each client is served
// the role its certificate names, and a NACK's status names that certificate.
func TestControlPlaneEndToEndOverMutualTLS(t *testing.T) {
	s := startSystemTLS(t, "alpha, beta", generateCerts(t, "--proxy", "gateway-proxy"))
	endToEnd(t, s, "extauth/")
}

// endToEnd drives s; a NACK's status is reported by nackedBy…, and over mutual TLS it
// also names the certificate that sent it.
func endToEnd(t *testing.T, s *system, nackedBy string) {

	t.Run("allow, deny and an open route", func(t *testing.T) {
		r := s.expect(t, "/", alpha, http.StatusOK)
		if got := r.upstream.Headers["matched-allowed-headers"]; got != "true" {
			t.Errorf("upstream header matched-allowed-headers = %q, want true (set by the plugin)", got)
		}
		s.expect(t, "/", wrong, http.StatusForbidden)
		s.expect(t, "/", nil, http.StatusForbidden)
		s.expect(t, "/public/hello", nil, http.StatusOK)
		s.expectStatus(t, "VirtualService", "default", "Accepted", "gatehouse")
		s.expectStatus(t, "AuthConfig", "plugin-auth", "Accepted", "gatehouse")
	})

	t.Run("an edited AuthConfig takes effect", func(t *testing.T) {
		testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "gamma"))
		s.expect(t, "/", alpha, http.StatusForbidden)
		s.expect(t, "/", gamma, http.StatusOK)
	})

	t.Run("an edited VirtualService takes effect", func(t *testing.T) {
		s.expect(t, "/extra", nil, http.StatusForbidden) // the secured "/" route matches it
		testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), virtualService("default", `["*"]`, "/extra"))
		s.expect(t, "/extra", nil, http.StatusOK)
	})

	t.Run("a bad edit is Rejected and the last good version keeps serving", func(t *testing.T) {
		bad := strings.Replace(virtualService("default", `["*"]`, "/extra"), "name: echo,", "name: missing,", 1)
		testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), bad)
		reasons := s.expectStatus(t, "VirtualService", "default", "Rejected", "gatehouse")
		if !strings.Contains(strings.Join(reasons, "\n"), "missing") {
			t.Errorf("reasons %q do not name the missing upstream", reasons)
		}
		s.expect(t, "/public/x", nil, http.StatusOK)
		s.expect(t, "/extra", nil, http.StatusOK)
		s.expect(t, "/", gamma, http.StatusOK)
		testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), virtualService("default", `["*"]`, "/extra"))
		s.expectStatus(t, "VirtualService", "default", "Accepted", "gatehouse")
	})

	t.Run("a config extauth cannot build is NACKed and shown", func(t *testing.T) {
		testbin.WriteFile(t, filepath.Join(s.dir, "broken.yaml"), authConfig("broken", "no_such_plugin", "alpha"))
		reasons := s.expectStatus(t, "AuthConfig", "broken", "Rejected", nackedBy)
		if s.certs != "" {
			if by := s.reportedBy(t, "AuthConfig", "broken", "Rejected"); !strings.Contains(by, "(spiffe://cluster.local/ns/gatehouse-system/role/extauth)") {
				t.Errorf("the NACK is reported by %q, which names no certificate identity", by)
			}
		}
		if !strings.Contains(strings.Join(reasons, "\n"), "no_such_plugin") {
			t.Errorf("reasons %q do not name the plugin that failed", reasons)
		}
		// The NACK concerns only that config: the others keep serving.
		s.expect(t, "/", gamma, http.StatusOK)
		s.expectStatus(t, "AuthConfig", "plugin-auth", "Accepted", "gatehouse")
	})

	t.Run("the data plane keeps serving through a control-plane crash", func(t *testing.T) {
		var wronglyAllowed, served, failed atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if r, err := s.get("/", wrong); err == nil && r.status == http.StatusOK {
					wronglyAllowed.Add(1)
				}
				if r, err := s.get("/", gamma); err == nil && r.status == http.StatusOK {
					served.Add(1)
				} else {
					failed.Add(1)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		s.cp.Kill()
		// With the control plane gone, both data-plane processes keep serving.
		before := served.Load()
		s.expect(t, "/", gamma, http.StatusOK)
		s.expect(t, "/", wrong, http.StatusForbidden)
		deadline := time.Now().Add(settle)
		for served.Load() < before+20 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if served.Load() < before+20 {
			t.Errorf("only %d allowed requests served while the control plane was down", served.Load()-before)
		}
		s.startControlPlane(t)
		testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "delta"))
		s.expect(t, "/", map[string]string{"x-required": "delta"}, http.StatusOK)
		close(stop)
		wg.Wait()
		if n := wronglyAllowed.Load(); n != 0 {
			t.Errorf("%d requests with a wrong header were allowed during the crash and restart", n)
		}
		if s.ex.Exited() || s.gateway.Exited() {
			t.Errorf("a data-plane process exited (extauth %t, gateway %t)", s.ex.Exited(), s.gateway.Exited())
		}
		t.Logf("during crash and restart: %d allowed requests served, %d not", served.Load(), failed.Load())
	})
}
