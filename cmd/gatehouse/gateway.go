package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/devgateway/proxyadmin"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// defaultProxyAdmin is Envoy's admin address; the gateway's admin answers there.
const defaultProxyAdmin = "127.0.0.1:19000"

type gatewayOptions struct {
	xds, role, nodeID, listen, httpsListen string
	// xdsTLSDir is the certificate folder presented to the control plane ("": plain text).
	xdsTLSDir string
	// admin is the proxy admin's address ("": off).
	admin string
	// echo, when set, also serves the built-in echo upstream there (for trying things out).
	echo string
}

func (o *gatewayOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.role, "role", xds.DefaultProxyRole, "gateway proxy this gateway plays, <namespace>~<proxy name>")
	cmd.Flags().StringVar(&o.nodeID, "node-id", "", "xDS node id, unique per process (default <hostname>-<pid>)")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:8080", "local address of the control plane's HTTP listener (port 8080)")
	cmd.Flags().StringVar(&o.httpsListen, "https-listen", "127.0.0.1:8443", "local address of the control plane's HTTPS listener (port 8443); empty to refuse it")
}

func (o *gatewayOptions) check() error {
	if o.xds == "" {
		return errors.New("gateway: --xds is required")
	}
	ns, name, ok := strings.Cut(o.role, "~")
	if !ok || ns == "" || name == "" || strings.Contains(name, "~") {
		return fmt.Errorf("gateway: --role %q: want <namespace>~<proxy name>, e.g. %s", o.role, xds.DefaultProxyRole)
	}
	if o.listen == "" {
		return errors.New("gateway: --listen is required")
	}
	return nil
}

func gatewayCommand(_, stderr io.Writer) *cobra.Command {
	var o gatewayOptions
	cmd := &cobra.Command{
		Use:   "gateway --xds ADDR",
		Short: "Run the dev gateway on the Envoy config a control plane serves over xDS",
		Long: "Plays Envoy's part on a laptop: follows the control plane at --xds as the gateway proxy --role\n" +
			"(delta ADS: listeners, routes, clusters, endpoints, secrets) and serves its listener on port 8080\n" +
			"at --listen and the one on 8443 at --https-listen. A listener answers 503 until everything it needs\n" +
			"has arrived; what the gateway cannot honour is NACKed, never served open. When the control plane\n" +
			"goes away it keeps serving what it has. Not a production proxy: production is Envoy.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.xdsTLSDir != "" && !cmd.Flags().Changed("role") {
				f, err := mtls.Load(o.xdsTLSDir, zerolog.Nop())
				if err != nil {
					return exit(2, fmt.Errorf("gateway: --xds-tls-dir: %w", err))
				}
				o.role = f.Self().Identity.Role // the role its certificate names
			}
			if err := o.check(); err != nil {
				return exit(2, err)
			}
			logs := proxyadmin.NewLogBuffer()
			log, err := logging.New(io.MultiWriter(stderr, logs), "gateway")
			if err != nil {
				return exit(2, err)
			}
			g, ctx := errgroup.WithContext(cmd.Context())
			rec := proxyadmin.NewRecorder(log)
			p, err := startGateway(ctx, g, log, o, rec.Wrap)
			if err != nil {
				return err
			}
			if o.admin != "" {
				serveProxyAdmin(ctx, g, log, o, proxyadmin.Options{Recorder: rec, Logs: logs,
					Listeners: func() map[string]string { return gatewayListeners(o) },
					Ready:     func() bool { return p.Ready(devgateway.HTTPPort) }})
			}
			if o.echo != "" {
				serveHTTP(ctx, g, log, "echo upstream", o.echo, devgateway.Echo())
			}
			return g.Wait()
		},
	}
	cmd.Flags().StringVar(&o.xds, "xds", "", "control plane ADS address, e.g. 127.0.0.1:9977")
	cmd.Flags().StringVar(&o.xdsTLSDir, "xds-tls-dir", "", "certificate folder (tls.crt, tls.key, ca.crt; re-read when it changes) for mutual TLS to the control plane; --role defaults to the proxy role its certificate names")
	cmd.Flags().StringVar(&o.admin, "admin-listen", defaultProxyAdmin, "proxy admin address, Envoy-like (/config_dump, /logging, /stats); empty: off")
	o.bind(cmd)
	cmd.Flags().StringVar(&o.echo, "echo-listen", "", "also serve the built-in echo upstream at this address, for trying things out (examples/default routes to 127.0.0.1:8090)")
	return cmd
}

// startGateway binds the gateway's local addresses, then runs its servers and its xDS
// client in g until ctx ends. `gatehouse dev` runs the same gateway in-process.
// wrap, when not nil, wraps the proxy's xDS handler (the admin's recorder).
func startGateway(ctx context.Context, g *errgroup.Group, log zerolog.Logger, o gatewayOptions, wrap func(func(string, map[string]*anypb.Any) error) func(string, map[string]*anypb.Any) error) (*devgateway.Proxy, error) {
	addrs := map[uint32]string{devgateway.HTTPPort: o.listen}
	if o.httpsListen != "" {
		addrs[devgateway.HTTPSPort] = o.httpsListen
	}
	ports := make([]uint32, 0, len(addrs))
	listeners := map[uint32]net.Listener{}
	for port, addr := range addrs {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, fmt.Errorf("gateway: listener port %d: %w", port, err)
		}
		ports = append(ports, port)
		listeners[port] = lis
	}
	creds, err := xdsCredentials(log, o.xdsTLSDir, o.role)
	if err != nil {
		for _, l := range listeners {
			l.Close()
		}
		return nil, exit(2, fmt.Errorf("gateway: --xds-tls-dir: %w", err))
	}
	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: log, Ports: ports})
	for port, lis := range listeners {
		log.Info().Uint32("envoy_port", port).Str("listen", lis.Addr().String()).Msg("gateway listener (503 until the control plane sends its complete config)")
		g.Go(func() error { return p.Serve(ctx, port, lis) })
	}
	handle := p.Handle
	if wrap != nil {
		handle = wrap(handle)
	}
	g.Go(func() error {
		defer p.Close()
		return xdsclient.Run(ctx, xdsclient.Options{
			Addr: o.xds, NodeID: o.nodeID, Role: o.role, Types: devgateway.Types, Log: log, Handle: handle, Credentials: creds,
		})
	})
	return p, nil
}

// gatewayListeners names the local address of each listener port, as /listeners shows.
func gatewayListeners(o gatewayOptions) map[string]string {
	out := map[string]string{"http": o.listen}
	if o.httpsListen != "" {
		out["https"] = o.httpsListen
	}
	return out
}

// serveProxyAdmin serves the proxy admin. It is not worth stopping the gateway for:
// an address in use is logged and the gateway serves on without it.
func serveProxyAdmin(ctx context.Context, g *errgroup.Group, log zerolog.Logger, o gatewayOptions, ao proxyadmin.Options) {
	lis, err := net.Listen("tcp", o.admin)
	if err != nil {
		log.Error().Err(err).Msg("proxy admin not served (use --admin-listen to pick another address)")
		return
	}
	srv := &http.Server{Handler: proxyadmin.Handler(ao), ReadHeaderTimeout: 10 * time.Second}
	log.Info().Str("listen", lis.Addr().String()).Msg("proxy admin serving")
	g.Go(func() error {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("proxy admin: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		return srv.Close() // closes followers of /logs too
	})
}
