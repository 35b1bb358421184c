package checkload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Server is one ext_authz server under test.
type Server struct {
	Name  string // "bare", "gatehouse", "plain", "mtls"
	Addr  string // gRPC host:port
	Admin string // gatehouse's admin host:port, when started with one
	Proc  *benchkit.Proc
	// ClientTLS is the certificate folder (tls.crt, tls.key, ca.crt) clients present to
	// a server of mutual TLS; "" for plain text.
	ClientTLS string
}

// startBare starts bareserver, which answers OK without work, on ServerCPU.
func startBare(env *benchkit.Env, dir string) (*Server, error) {
	addrs, err := benchkit.FreeAddrs(1)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "bare", Addr: addrs[0]}
	bin, args := benchkit.Pinned(benchkit.ServerCPU, env.Bins.Bare, "-listen", s.Addr)
	s.Proc, err = env.Procs.Start("bareserver", filepath.Join(dir, "bareserver.log"), benchkit.ServerEnv(), bin, args...)
	return s, err
}

// StartExtauth starts `gatehouse extauth` with args on ServerCPU, on a free port, with
// extraEnv beside benchkit.ServerEnv, and with an admin server when admin is set.
func StartExtauth(env *benchkit.Env, name, logPath string, admin bool, extraEnv []string, args ...string) (*Server, error) {
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Addr: addrs[0]}
	args = append([]string{"extauth", "--listen", s.Addr}, args...)
	if admin {
		s.Admin = addrs[1]
		args = append(args, "--admin-listen", s.Admin)
	}
	bin, args := benchkit.Pinned(benchkit.ServerCPU, env.Bins.Gatehouse, args...)
	s.Proc, err = env.Procs.Start("gatehouse ("+name+")", logPath, append(benchkit.ServerEnv(), extraEnv...), bin, args...)
	return s, err
}

// Chain is a server StartChains starts: the bare server, or `gatehouse extauth` on
// the chains of Paths with Env and Args added.
type Chain struct {
	Name        string
	Bare, Admin bool
	Env, Args   []string
	ClientTLS   string // see Server
}

// StartChains writes the AuthConfigs of Paths to dir/auth_config.yaml, starts cs and
// waits until each answers Paths as measured. stop stops every server started, also
// after an error. The one-step chain is examples/default's, pinned here so that an edit
// to the example cannot change what is measured.
func StartChains(ctx context.Context, env *benchkit.Env, dir string, cs ...Chain) (servers []*Server, stop func(), err error) {
	stop = func() {
		for _, s := range servers {
			env.Procs.Stop(s.Proc)
		}
	}
	cfg := filepath.Join(dir, "auth_config.yaml")
	doc := chainYAML("plugin-auth", 1) + "---\n" + chainYAML("plugin-chain", 3) + "---\n" +
		chainYAML(fmt.Sprintf("plugin-chain-%d", LongChainSteps), LongChainSteps)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, stop, err
	}
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		return nil, stop, err
	}
	for _, c := range cs {
		var s *Server
		if c.Bare {
			s, err = startBare(env, dir)
		} else {
			s, err = StartExtauth(env, c.Name, filepath.Join(dir, c.Name+".log"), c.Admin, c.Env,
				append([]string{"--config", cfg, "--plugin-dir", env.Bins.PluginDir}, c.Args...)...)
		}
		if err != nil {
			return servers, stop, err
		}
		s.ClientTLS = c.ClientTLS
		servers = append(servers, s)
	}
	for _, s := range servers {
		if err := WaitUntil(ctx, s, func(ctx context.Context) error { return verify(ctx, s) }); err != nil {
			return servers, stop, err
		}
	}
	return servers, stop, nil
}

// WaitUntil calls probe every 100ms until it succeeds, s exits, or 30 seconds pass.
func WaitUntil(ctx context.Context, s *Server, probe func(context.Context) error) error {
	return benchkit.Poll(ctx, s.Proc, 30*time.Second, 100*time.Millisecond, probe)
}

// BrowserRequest is what Envoy sends for a browser's GET of path on the route of id:
// the eight headers every such request has plus extra, the route's config_id and
// both peers.
func BrowserRequest(id, path string, extra map[string]string) *authv3.CheckRequest {
	peer := func(ip string, port uint32) *authv3.AttributeContext_Peer {
		return &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}},
		}}}
	}
	headers := map[string]string{
		":authority": "app.example.com", ":method": "GET", ":path": path, ":scheme": "https",
		"accept-encoding": "gzip, deflate, br", "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
		"x-forwarded-for": "203.0.113.7", "x-request-id": "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
	}
	for k, v := range extra {
		headers[k] = v
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      peer("203.0.113.7", 53124),
		Destination: peer("10.0.0.12", 8080),
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11", Method: "GET", Path: path, Host: "app.example.com",
			Scheme: "https", Protocol: "HTTP/1.1", Headers: headers,
		}},
		ContextExtensions: map[string]string{"config_id": id},
	}}
}
