package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// authConfigYAML is examples/default/auth_config.yaml, pinned here so that an edit
// to the example cannot change what the benchmark measures: one RequiredHeader step;
// then the same step three times over and longChainSteps times over (each with its
// own config instance), which show what a further step of a chain costs.
func authConfigYAML() string {
	return chainYAML("plugin-auth", 1) + "---\n" + chainYAML("plugin-chain", 3) + "---\n" + chainYAML(longChainName, longChainSteps)
}

// longChainSteps is the length of the long chain. What a further step costs under
// load is the slope from the one-step chain to it: the rounds of a ratio scatter by a
// few percent of a ~60 µs Check, several µs, and a slope over twenty further steps
// divides that by twenty, where the three-step chain divides it by two.
const longChainSteps = 21

// longChainName is the long chain's AuthConfig.
var longChainName = fmt.Sprintf("plugin-chain-%d", longChainSteps)

// chainYAML is the AuthConfig name with steps required_header steps, each allowing
// "alpha" and a value of its own, so that every step runs for "alpha".
func chainYAML(name string, steps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: %s
  namespace: gatehouse-system
spec:
  configs:
`, name)
	own := []string{"beta", "gamma", "delta"}
	for i := range steps {
		v := fmt.Sprintf("v%d", i)
		if i < len(own) {
			v = own[i]
		}
		fmt.Fprintf(&b, `    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, %s]
`, v)
	}
	return b.String()
}

// server is one ext_authz server under test.
type server struct {
	name  string // "bare" or "gatehouse"
	addr  string // gRPC host:port
	admin string // gatehouse's admin host:port, when started with one
	proc  *proc
	// clientTLS is the certificate folder (tls.crt, tls.key, ca.crt) clients present
	// to a server of mutual TLS; "" for plain text.
	clientTLS string
}

// servers are the two servers a run compares.
type servers struct {
	bare, gatehouse *server
}

// startServers starts bareserver and `gatehouse extauth` on free 127.0.0.1 ports,
// both pinned to the server CPU when the machine has two, and waits until each
// answers a Check as expected.
func startServers(ctx context.Context, procs *procSet, bins binaries, dir string, admin bool) (servers, error) {
	cfg := filepath.Join(dir, "auth_config.yaml")
	if err := os.WriteFile(cfg, []byte(authConfigYAML()), 0o644); err != nil {
		return servers{}, err
	}
	addrs, err := freeAddrs(3)
	if err != nil {
		return servers{}, err
	}
	env := serverEnv()
	bare := &server{name: "bare", addr: addrs[0]}
	gh := &server{name: "gatehouse", addr: addrs[1]}
	bin, args := pinned(serverCPU, bins.bare, "-listen", bare.addr)
	if bare.proc, err = procs.start("bareserver", filepath.Join(dir, "bareserver.log"), env, bin, args...); err != nil {
		return servers{}, err
	}
	args = []string{"extauth", "--config", cfg, "--plugin-dir", bins.pluginDir, "--listen", gh.addr}
	if admin {
		gh.admin = addrs[2]
		args = append(args, "--admin-listen", gh.admin)
	}
	bin, args = pinned(serverCPU, bins.gatehouse, args...)
	if gh.proc, err = procs.start("gatehouse", filepath.Join(dir, "gatehouse.log"), env, bin, args...); err != nil {
		return servers{}, err
	}
	for _, s := range []*server{bare, gh} {
		if err := waitReady(ctx, s); err != nil {
			return servers{}, err
		}
	}
	return servers{bare: bare, gatehouse: gh}, nil
}

// serverEnv is this process's environment with logging at info (no per-request log
// lines, as in production) and without the default admin server.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOG_LEVEL=") && !strings.HasPrefix(kv, "START_STATS_SERVER=") {
			env = append(env, kv)
		}
	}
	return append(env, "LOG_LEVEL=info", "START_STATS_SERVER=false")
}

// freeAddrs returns n distinct 127.0.0.1 addresses whose ports were free a moment ago.
func freeAddrs(n int) ([]string, error) {
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// waitReady checks s until it gives the expected answers for both paths, for up to
// 30 seconds.
func waitReady(ctx context.Context, s *server) error {
	return waitUntil(ctx, s, func(ctx context.Context) error { return verify(ctx, s) })
}

// waitUntil calls probe every 100ms until it succeeds, s exits, or 30 seconds pass.
func waitUntil(ctx context.Context, s *server, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		if err := s.proc.exited(); err != nil {
			return err
		}
		if last = probe(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); err == context.DeadlineExceeded {
				return fmt.Errorf("%s on %s not ready after 30s: %w", s.name, s.addr, last)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
