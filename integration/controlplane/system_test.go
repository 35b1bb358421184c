// Package controlplane_test runs the control plane, extauth and the gateway as separate
// gatehouse processes wired by real xDS on loopback, with the test process as the
// upstream, and drives requests and resource edits through them.
package controlplane_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// settle bounds how long a change may take to reach the data plane in these tests; it
// is a deadline for polling, not a performance figure (see BENCHMARKS.md for those).
const settle = 20 * time.Second

// system is a control plane, an extauth and a gateway, each its own process.
type system struct {
	dir string
	// certs, when set, is a `gatehouse certs generate` folder: xDS is mutual TLS.
	certs                      string
	xds, admin, gw, extauthAdr string
	cp, ex, gateway            *testbin.Process
	client                     *http.Client
	// plugins is extauth's plugin folder ("": the sample plugins).
	plugins string
	// cpArgs are more flags of the control plane.
	cpArgs []string
}

func startSystem(t *testing.T, allowed string) *system { return startSystemTLS(t, allowed, "") }

// startSystemTLS starts the system with xDS over mutual TLS from the certificate
// folders of certs (none when "").
func startSystemTLS(t *testing.T, allowed, certs string) *system {
	t.Helper()
	return startSystemWith(t, allowed, certs)
}

// startSystemWith is startSystemTLS with more flags for the control plane.
func startSystemWith(t *testing.T, allowed, certs string, cpArgs ...string) *system {
	t.Helper()
	echo := httptest.NewServer(devgateway.Echo())
	t.Cleanup(echo.Close)
	s := &system{
		xds: testbin.FreeAddr(t), admin: testbin.FreeAddr(t), gw: testbin.FreeAddr(t), extauthAdr: testbin.FreeAddr(t),
		client: &http.Client{Timeout: 5 * time.Second}, certs: certs, cpArgs: cpArgs,
	}
	s.dir = resources(t, echo.Listener.Addr().String(), s.extauthAdr, allowed)
	s.startControlPlane(t)
	bin := testbin.Gatehouse(t)
	s.startExtauth(t)
	s.gateway = testbin.Start(t, nil, bin, append([]string{"gateway", "--xds", s.xds, "--role", xds.DefaultProxyRole, "--listen", s.gw,
		"--https-listen", testbin.FreeAddr(t)}, s.tlsArgs("proxy-gateway-proxy")...)...)
	testbin.WaitTCP(t, s.gateway, s.gw, settle)
	return s
}

func (s *system) startControlPlane(t *testing.T) {
	t.Helper()
	s.cp = testbin.Start(t, nil, testbin.Gatehouse(t), append([]string{"controlplane", "--resources", s.dir,
		"--xds-listen", s.xds, "--admin-listen", s.admin}, append(s.tlsArgs("controlplane"), s.cpArgs...)...)...)
	testbin.WaitTCP(t, s.cp, s.xds, settle)
}

func (s *system) startExtauth(t *testing.T) {
	t.Helper()
	plugins := s.plugins
	if plugins == "" {
		plugins = testbin.SamplePlugins(t)
	}
	s.ex = testbin.Start(t, nil, testbin.Gatehouse(t), append([]string{"extauth", "--xds", s.xds, "--plugin-dir", plugins,
		"--listen", s.extauthAdr}, s.tlsArgs("extauth")...)...)
}

// tlsArgs are the flags that give a process its certificate folder, if xDS is mTLS.
func (s *system) tlsArgs(component string) []string {
	if s.certs == "" {
		return nil
	}
	return []string{"--xds-tls-dir", filepath.Join(s.certs, component)}
}

// reply is what a client got through the gateway.
type reply struct {
	status   int
	upstream *devgateway.Echoed // nil when the upstream was not reached
}

func (s *system) get(path string, headers map[string]string) (reply, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+s.gw+path, nil)
	if err != nil {
		return reply{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode}
	if resp.Header.Get("Content-Type") == "application/json" && resp.StatusCode == http.StatusOK {
		r.upstream = &devgateway.Echoed{}
		if err := json.Unmarshal(body, r.upstream); err != nil {
			return reply{}, fmt.Errorf("echo body: %w: %s", err, body)
		}
	}
	return r, nil
}

// expect polls until path answers want (and, for 200, came from the upstream).
func (s *system) expect(t *testing.T, path string, headers map[string]string, want int) reply {
	t.Helper()
	var last reply
	testbin.Eventually(t, settle, func() error {
		r, err := s.get(path, headers)
		if err != nil {
			return err
		}
		last = r
		if r.status != want || (want == http.StatusOK && r.upstream == nil) {
			return fmt.Errorf("GET %s %v: got %d (upstream reached: %t), want %d", path, headers, r.status, r.upstream != nil, want)
		}
		return nil
	})
	return last
}

// resourceStatus is one entry of the control plane's GET /statuses.
// reportedBy is who reported the status of state on kind name ("" when none did).
func (s *system) reportedBy(t *testing.T, kind, name, state string) string {
	t.Helper()
	all, err := s.statuses()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		for _, st := range r.Statuses {
			if r.Kind == kind && r.Name == name && st.State == state {
				return st.ReportedBy
			}
		}
	}
	return ""
}

type resourceStatus struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     string `json:"state"`
	DataPlane string `json:"dataPlane"`
	Statuses  []struct {
		State      string   `json:"state"`
		Reasons    []string `json:"reasons"`
		ReportedBy string   `json:"reportedBy"`
	} `json:"statuses"`
}

func (s *system) statuses() ([]resourceStatus, error) {
	status, body, err := testbin.Get("http://" + s.admin + "/statuses")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /statuses: %d %s", status, http.StatusText(status))
	}
	var out []resourceStatus
	return out, json.Unmarshal([]byte(body), &out)
}

// expectStatus polls until the resource kind/name is in state overall, with a status of
// that state reported by someone whose name starts with by, and returns that status's
// reasons.
func (s *system) expectStatus(t *testing.T, kind, name, state, by string) []string {
	t.Helper()
	var reasons []string
	testbin.Eventually(t, settle, func() error {
		all, err := s.statuses()
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.Kind != kind || r.Name != name {
				continue
			}
			for _, st := range r.Statuses {
				if r.State == state && st.State == state && strings.HasPrefix(st.ReportedBy, by) {
					reasons = st.Reasons
					return nil
				}
			}
			return fmt.Errorf("%s %s: %+v, want state %s reported by %s…", kind, name, r, state, by)
		}
		return fmt.Errorf("%s %s: no status among %d resources", kind, name, len(all))
	})
	return reasons
}
