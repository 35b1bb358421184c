package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/build/devloop"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/examples"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

type devOptions struct {
	extauth   extauthOptions
	resources string
	listen    string
	https     string
	echo      string
	xdsListen string
	// plugin, when its module is set, is rebuilt on every save (--plugin-module).
	plugin struct{ module, gatehouseSrc, symbol string }
}

func devCommand(_, stderr io.Writer) *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the control plane, extauth, a dev gateway and an echo upstream in one process",
		Long: "Runs everything on one machine so you can curl it: the control plane, the extauth server, an\n" +
			"HTTP gateway that does what Envoy does with the control plane's listeners, routes and clusters,\n" +
			"and an echo upstream, wired through real xDS on loopback as separate processes would be.\n" +
			"Without --resources it serves the --plugin-module's dev folder (`gatehouse plugin new` writes one)\n" +
			"or else the embedded examples (see examples/default). With --resources it reads that folder\n" +
			"and reloads on change. With --plugin-module it builds that plugin module into\n" +
			"--plugin-dir like `gatehouse plugin build`, and again on every save of its sources; each build\n" +
			"that passes the pre-flight and trial load is loaded beside the last one, and a build that fails\n" +
			"is shown once while the last good one keeps serving. Not a production proxy: production is Envoy.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logging.New(stderr, "")
			if err != nil {
				return exit(2, err)
			}
			return runDev(cmd.Context(), log, o)
		},
	}
	o.extauth.bind(cmd, "extauth-listen")
	cmd.Flags().StringVar(&o.resources, "resources", "", "folder of resource YAML files (default: the --plugin-module's dev folder if it has one, as `gatehouse plugin new` writes it; else the embedded examples)")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:8080", "dev gateway HTTP address (Envoy listener port 8080)")
	cmd.Flags().StringVar(&o.https, "https-listen", "", "dev gateway HTTPS address (Envoy listener port 8443; empty: not served)")
	cmd.Flags().StringVar(&o.echo, "echo-listen", "127.0.0.1:8090", "echo upstream address (empty to not start it)")
	cmd.Flags().StringVar(&o.plugin.module, "plugin-module", "", "plugin module folder to build into --plugin-dir now and on every save of its sources")
	cmd.Flags().StringVar(&o.plugin.gatehouseSrc, "gatehouse-src", os.Getenv("GATEHOUSE_SRC"), "with --plugin-module: gatehouse source checkout to build against, as for `gatehouse plugin build`; default $GATEHOUSE_SRC")
	cmd.Flags().StringVar(&o.plugin.symbol, "plugin-symbol", "Plugin", "with --plugin-module: the exported symbol the trial load checks")
	cmd.Flags().StringVar(&o.xdsListen, "xds-listen", "127.0.0.1:0", "the in-process control plane's xDS address (port 0: any free port)")
	return cmd
}

// component is log with its component field set once (a second With().Str would write
// the key twice in every line).
func component(log zerolog.Logger, name string) zerolog.Logger {
	return log.With().Str("component", name).Logger()
}

func runDev(ctx context.Context, log zerolog.Logger, o devOptions) error {
	devLog := component(log, "dev")
	var plugin *devloop.Loop
	if o.plugin.module != "" {
		var err error
		plugin, err = devloop.New(devloop.Options{Log: devLog, Module: o.plugin.module, PluginDir: o.extauth.pluginDir,
			GatehouseSrc: o.plugin.gatehouseSrc, Symbol: o.plugin.symbol, Describe: (*loader.Diagnosis).String})
		if err != nil {
			return fmt.Errorf("dev: %w", err)
		}
		defer plugin.Close()
		// Each build is trial-loaded before it is published; extauth does not do it again.
		o.extauth.trialPassed = plugin.TrialPassed
	}
	ex, err := newExtauth(component(log, "extauth"), o.extauth)
	if err != nil {
		return err
	}
	cp, err := newControlplane(component(log, "controlplane"), o.xdsListen, "", 0, 0, nil)
	if err != nil {
		return err
	}
	src, err := devSource(component(log, "controlplane"), o, ex.lis.Addr().String())
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	if plugin != nil {
		// The first build is published before extauth starts, so the first configs
		// find the plugin.
		plugin.Rebuild(ctx, "")
	}
	gwLog := component(log, "gateway")
	proxy := devgateway.NewProxy(devgateway.ProxyOptions{Log: gwLog})
	xdsAddr := cp.lis.Addr().String()

	// The gateway starts listening once extauth has built its first configs, so the
	// first request after "gateway serving" is not denied for a config still loading.
	applied := make(chan struct{})
	var once sync.Once
	handle := ex.xdsHandle(ex.metrics.SetStatus)

	g, ctx := errgroup.WithContext(ctx)
	// Shutdown goes front to back: the gateway stops accepting and drains its in-flight
	// requests first, and only then do extauth, the upstream and the control plane stop,
	// so a request that passed auth is not cut off by the upstream closing under it.
	back, stopBack := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBack()
	var front sync.WaitGroup
	cp.serve(back, g, src)
	g.Go(func() error {
		return xdsclient.Run(back, xdsclient.Options{
			Addr: xdsAddr, Role: xds.RoleExtauth, Types: []string{xds.ExtAuthConfigType}, Log: ex.log,
			Handle: func(typeURL string, res map[string]*anypb.Any) error {
				err := handle(typeURL, res)
				once.Do(func() { close(applied) })
				return err
			},
		})
	})
	g.Go(func() error {
		// The gateway health-checks extauth: it follows the control plane once extauth
		// is ready, so its first check finds extauth serving.
		select {
		case <-applied:
		case <-back.Done():
			return nil
		}
		return xdsclient.Run(back, xdsclient.Options{
			Addr: xdsAddr, Role: xds.DefaultProxyRole, Types: xds.ProxyTypes, Log: gwLog, Handle: proxy.Handle,
		})
	})
	ex.serve(back, g)
	if plugin != nil {
		g.Go(func() error { return plugin.Run(ctx) })
	}
	if o.echo != "" {
		serveHTTP(back, g, devLog, "echo upstream", o.echo, devgateway.Echo())
	}
	waitReady(ctx, devLog, applied, proxy)
	if err := serveProxy(ctx, g, &front, gwLog, proxy, devgateway.HTTPPort, o.listen); err != nil {
		return err
	}
	if o.https != "" {
		if err := serveProxy(ctx, g, &front, gwLog, proxy, devgateway.HTTPSPort, o.https); err != nil {
			return err
		}
	}
	// Started after every front server is counted, so Wait cannot miss one.
	g.Go(func() error {
		<-ctx.Done()
		front.Wait()
		stopBack()
		return nil
	})
	return g.Wait()
}

// startupWait bounds how long dev waits for its first config before it listens anyway
// (a folder without AuthConfigs or VirtualServices never completes one).
const startupWait = 10 * time.Second

// waitReady waits until extauth has applied its first configs and the gateway's HTTP
// listener is complete, or startupWait passes.
func waitReady(ctx context.Context, log zerolog.Logger, applied <-chan struct{}, p *devgateway.Proxy) {
	deadline := time.Now().Add(startupWait)
	for {
		select {
		case <-applied:
			if p.Ready(devgateway.HTTPPort) {
				return
			}
		default:
		}
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			log.Warn().Dur("waited", startupWait).Msg("no complete config yet; serving anyway (requests answer 503 until one arrives)")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// devResourcesDir is the folder of a plugin module that dev serves when it is given
// --plugin-module and no --resources.
const devResourcesDir = "dev"

// devSource is the --resources folder, else the plugin module's dev folder, else the
// embedded examples, with dev's own services' Upstreams pointed at where dev serves them.
func devSource(log zerolog.Logger, o devOptions, extauthAddr string) (source.Source, error) {
	targets, err := examples.Targets(o.echo, extauthAddr)
	if err != nil {
		return nil, err
	}
	var src source.Source
	resources := o.resources
	if resources == "" && o.plugin.module != "" {
		// `gatehouse plugin new` writes dev/ into the module: a route through the
		// plugin's step, so `gatehouse dev --plugin-module .` serves the plugin.
		if fi, err := os.Stat(filepath.Join(o.plugin.module, devResourcesDir)); err == nil && fi.IsDir() {
			resources = filepath.Join(o.plugin.module, devResourcesDir)
		}
	}
	if resources == "" {
		files, err := examples.DefaultFiles()
		if err != nil {
			return nil, fmt.Errorf("embedded examples: %w", err)
		}
		st := &source.Static{Name: "embedded examples", Files: files}
		if _, err := st.Input(); err != nil {
			return nil, err
		}
		src = st
	} else {
		log.Info().Str("resources", resources).Msg("serving the resources of this folder")
		src = &source.Dir{Path: resources, Log: log}
	}
	return &source.Mapped{Source: src, Map: targets}, nil
}

// serveProxy serves the gateway's Envoy listener port on addr in g, counted in front
// until it has drained.
func serveProxy(ctx context.Context, g *errgroup.Group, front *sync.WaitGroup, log zerolog.Logger, p *devgateway.Proxy, port uint32, addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	log.Info().Str("listen", lis.Addr().String()).Uint32("envoy_port", port).Msg("gateway serving")
	front.Add(1)
	g.Go(func() error {
		defer front.Done()
		return p.Serve(ctx, port, lis)
	})
	return nil
}
