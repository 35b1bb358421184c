package controlplane_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const (
	allow = code.Code_OK
	deny  = code.Code_PERMISSION_DENIED
)

// TestExtauthFollowsTheControlPlane runs `gatehouse extauth --xds` against an
// in-process control plane: configs that build serve and are ACKed, one that does not
// is NACKed by name while the rest (and its own last good version) keep serving, and
// the control plane going away and coming back never leaves extauth without its configs.
func TestExtauthFollowsTheControlPlane(t *testing.T) {
	bin := testbin.Gatehouse(t)
	plugins := testbin.SamplePlugins(t)
	cp := startControlPlane(t, "127.0.0.1:0")
	cp.publish(requiredHeader("default.good", "required_header.so", "alpha"))

	listen := testbin.FreeAddr(t)
	p := testbin.Start(t, []string{"LOG_LEVEL=debug"}, bin, "extauth", "--xds", cp.addr, "--plugin-dir", plugins, "--listen", listen)
	testbin.WaitTCP(t, p, listen, patience)
	c := newChecker(t, listen)

	t.Run("a config that builds serves", func(t *testing.T) {
		testbin.Eventually(t, patience, func() error {
			return c.verdicts("default.good", map[string]code.Code{"alpha": allow, "beta": deny})
		})
	})

	t.Run("a config that does not build is NACKed by name; the others serve", func(t *testing.T) {
		cp.publish(requiredHeader("default.good", "required_header.so", "alpha"), requiredHeader("default.bad", "missing.so", "alpha"))
		n := cp.nackFor("default.bad")
		lines := strings.Split(n.Detail, "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "default.bad: ") || !strings.Contains(lines[0], "missing.so") {
			t.Errorf("NACK detail %q, want one line \"default.bad: <reason naming missing.so>\"", n.Detail)
		}
		if n.Role != "extauth" || n.Versions["default.bad"] == "" {
			t.Errorf("NACK %+v lacks the role or the version of default.bad", n)
		}
		if err := c.verdicts("default.good", map[string]code.Code{"alpha": allow}); err != nil {
			t.Error(err)
		}
		if err := c.verdicts("default.bad", map[string]code.Code{"alpha": deny}); err != nil {
			t.Errorf("a config that never built must deny as unknown: %v", err)
		}
	})

	t.Run("a bad edit keeps the last good version serving", func(t *testing.T) {
		cp.publish(requiredHeader("default.good", "required_header.so", "beta"))
		testbin.Eventually(t, patience, func() error {
			return c.verdicts("default.good", map[string]code.Code{"alpha": deny, "beta": allow})
		})
		cp.publish(requiredHeader("default.good", "gone.so", "gamma"))
		cp.nackFor("default.good")
		if err := c.verdicts("default.good", map[string]code.Code{"beta": allow, "gamma": deny}); err != nil {
			t.Error(err)
		}
		cp.publish(requiredHeader("default.good", "required_header.so", "beta"))
	})

	t.Run("the control plane going away and coming back", func(t *testing.T) {
		addr := cp.addr
		cp.grpc.Stop()
		testbin.Eventually(t, patience, func() error {
			if !strings.Contains(p.Output(), "control plane stream ended") {
				return fmt.Errorf("extauth has not noticed")
			}
			return nil
		})
		if err := c.verdicts("default.good", map[string]code.Code{"beta": allow, "alpha": deny}); err != nil {
			t.Errorf("while the control plane is away: %v", err)
		}
		// A new control plane with nothing published yet: extauth reconnects and waits,
		// still serving what it has (the server reads its stream once it has published).
		next := startControlPlane(t, addr)
		testbin.Eventually(t, patience, func() error {
			if next.streams.Load() != 1 {
				return fmt.Errorf("extauth not reconnected yet")
			}
			return nil
		})
		if err := c.verdicts("default.good", map[string]code.Code{"beta": allow, "alpha": deny}); err != nil {
			t.Errorf("connected to a control plane that has published nothing: %v", err)
		}
		next.publish(requiredHeader("default.good", "required_header.so", "gamma"))
		testbin.Eventually(t, patience, func() error {
			return c.verdicts("default.good", map[string]code.Code{"gamma": allow, "beta": deny})
		})
		if n := next.extauthClients(); n != 1 {
			t.Errorf("%v extauth clients counted once published, want 1", n)
		}
	})
}
