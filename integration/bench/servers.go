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
// and the same step three times over (each with its own config instance), which
// shows what a further step of a chain costs.
const authConfigYAML = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: plugin-auth
  namespace: gatehouse-system
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, beta]
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: plugin-chain
  namespace: gatehouse-system
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, beta]
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, gamma]
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config:
          RequiredHeader: x-required
          AllowedValues: [alpha, delta]
`

// server is one ext_authz server under test.
type server struct {
	name  string // "bare" or "gatehouse"
	addr  string // gRPC host:port
	admin string // gatehouse's admin host:port, when started with one
	proc  *proc
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
	if err := os.WriteFile(cfg, []byte(authConfigYAML), 0o644); err != nil {
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
