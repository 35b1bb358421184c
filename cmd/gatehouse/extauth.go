package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/internal/tracing"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/filesource"
	"gatehouse.dev/gatehouse/server/oidc"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// Defaults shared by the server commands.
const (
	defaultPluginDir     = "/auth-plugins"
	defaultExtauthListen = "127.0.0.1:8083"
	defaultAdminListen   = "127.0.0.1:9091"
	// defaultTraceRatio records one Check in a hundred: /zpages keeps showing what
	// Checks look like without every Check paying for a recorded span.
	defaultTraceRatio = 0.01
	// defaultShutdownDelay covers a health checker that checks every second or two (the
	// extauth cluster we emit checks every second, with a timeout of one), and is the
	// longest a checker that never comes back (gone, or a one-off probe) holds a stop.
	defaultShutdownDelay = 3 * time.Second
)

type extauthOptions struct {
	config, xds, pluginDir, listen, admin string
	// tlsDir and xdsTLSDir are certificate folders (internal/mtls): the ext_authz
	// server's, and the one presented to the control plane.
	tlsDir, xdsTLSDir string
	maxPluginVersions int
	traceRatio        float64
	decisions         decisionLogOptions
	// stdout takes the decision log (--decision-log stdout).
	stdout io.Writer
	// shutdownDelay bounds how long a stopping server answers Checks until its health
	// checkers have seen NOT_SERVING (server.Authorizer.Leave); 0 in dev, where the
	// gateway stops first.
	shutdownDelay time.Duration
	// trialPassed, set by `gatehouse dev --plugin-module`, is content it trial-loaded
	// before publishing it (loader.Options.TrialPassed).
	trialPassed func(sha256, symbol string) bool
}

func (o *extauthOptions) bind(cmd *cobra.Command, listenFlag string) {
	dir := os.Getenv("GATEHOUSE_PLUGIN_DIR")
	if dir == "" {
		dir = defaultPluginDir
	}
	admin := ""
	if on, _ := strconv.ParseBool(os.Getenv("START_STATS_SERVER")); on {
		admin = defaultAdminListen
	}
	cmd.Flags().StringVar(&o.pluginDir, "plugin-dir", dir, "folder of plugin .so files (env GATEHOUSE_PLUGIN_DIR)")
	cmd.Flags().StringVar(&o.listen, listenFlag, defaultExtauthListen, "ext_authz gRPC address")
	cmd.Flags().IntVar(&o.maxPluginVersions, "max-plugin-versions", 0, "past this many plugin versions loaded (none is ever unloaded), report NOT_SERVING to gRPC health checks so the orchestrator replaces the process; 0: never")
	cmd.Flags().Float64Var(&o.traceRatio, "trace-sample-ratio", defaultTraceRatio, "share of Checks (0 to 1) recorded as spans (for /zpages, and over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set) when Envoy sent no sampled trace context; each recorded Check costs a few microseconds of CPU more")
	o.decisions.bind(cmd)
	cmd.Flags().StringVar(&o.admin, "admin-listen", admin, "admin HTTP address for /metrics, /logging, /debug/pprof, /zpages, /auth-configs (on by default at "+defaultAdminListen+" when START_STATS_SERVER=true)")
}

func extauthCommand(stdout, stderr io.Writer) *cobra.Command {
	var o extauthOptions
	cmd := &cobra.Command{
		Use:   "extauth (--config PATH | --xds ADDR)",
		Short: "Run the ext_authz gRPC server on AuthConfigs from the control plane or from YAML",
		Long: "Runs the extauth server. With --xds it follows the control plane over delta ADS as role\n" +
			"\"extauth\": it ACKs the ExtAuthConfigs that build, NACKs the others naming each, keeps their last\n" +
			"good versions serving, and keeps serving what it has while the control plane is away.\n" +
			"With --config, for people who run plain Envoy, it reads AuthConfig, Secret and Settings\n" +
			"resources from a multi-document YAML file or a folder of them (VirtualServices and Upstreams are\n" +
			"ignored, a kind Gatehouse does not read is reported), reloads\n" +
			"on change, and keeps serving the last good config when an edit is bad.\n" +
			"gRPC health (and the admin's /ready) report NOT_SERVING until the first complete config is\n" +
			"built, and again from SIGTERM on; the health service \"liveness\" (and /healthz) stays SERVING.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.config == "") == (o.xds == "") {
				return exit(2, errors.New("extauth: exactly one of --config and --xds is required"))
			}
			if o.traceRatio < 0 || o.traceRatio > 1 {
				return exit(2, fmt.Errorf("extauth: --trace-sample-ratio %g: use a share from 0 (no spans) to 1 (every Check)", o.traceRatio))
			}
			log, err := logging.New(stderr, "extauth")
			if err != nil {
				return exit(2, err)
			}
			o.stdout = stdout
			return runExtauth(cmd.Context(), log, o)
		},
	}
	cmd.Flags().StringVar(&o.config, "config", "", "AuthConfig YAML file or folder")
	cmd.Flags().StringVar(&o.xds, "xds", "", "control plane ADS address (e.g. 127.0.0.1:9977)")
	cmd.Flags().StringVar(&o.xdsTLSDir, "xds-tls-dir", "", "certificate folder (tls.crt, tls.key, ca.crt; re-read when it changes) for mutual TLS to the control plane; its certificate must name the role extauth")
	cmd.Flags().StringVar(&o.tlsDir, "tls-dir", "", "certificate folder for serving ext_authz over mutual TLS: only clients whose certificate names a gateway proxy role are admitted")
	cmd.Flags().DurationVar(&o.shutdownDelay, "shutdown-delay", defaultShutdownDelay, "on SIGTERM health checks report NOT_SERVING at once; Checks are answered until every client that health-checked this server lately has seen it, for at most this long, then the Checks in flight finish (at most "+server.DefaultDrainTimeout.String()+")")
	o.bind(cmd, "listen")
	cmd.AddCommand(statusCommand(stdout, stderr))
	return cmd
}

func runExtauth(ctx context.Context, log zerolog.Logger, o extauthOptions) error {
	if o.xds != "" {
		return runExtauthXDS(ctx, log, o)
	}
	ex, err := newExtauth(log, o)
	if err != nil {
		return err
	}
	src := &filesource.Source{Path: o.config, Log: log, Apply: func(set *apiv1.Set) { ex.apply(set) },
		Problem: func(err error) { ex.reg.SetSource(o.config, err); ex.metrics.SetSource(o.config, err) }}
	g, ctx := errgroup.WithContext(ctx)
	ex.serve(ctx, g)
	// Health checks answer NOT_SERVING while the first full load builds.
	g.Go(func() error {
		if err := src.Load(); err != nil {
			return fmt.Errorf("extauth: %w", err)
		}
		ex.configured()
		return src.Watch(ctx)
	})
	return g.Wait()
}

// runExtauthXDS serves the ExtAuthConfigs the control plane at o.xds sends.
func runExtauthXDS(ctx context.Context, log zerolog.Logger, o extauthOptions) error {
	ex, err := newExtauth(log, o)
	if err != nil {
		return err
	}
	creds, err := xdsCredentials(log, o.xdsTLSDir, mtls.RoleExtauth)
	if err != nil {
		return exit(2, fmt.Errorf("extauth: --xds-tls-dir: %w", err))
	}
	g, ctx := errgroup.WithContext(ctx)
	versions := xdsclient.NewAppliedVersions(ex.registerer)
	follow, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	ex.stopFollowing = stopFollowing
	g.Go(func() error {
		return xdsclient.Run(follow, xdsclient.Options{
			Addr: o.xds, Role: xds.RoleExtauth, Types: []string{xds.ExtAuthConfigType}, Log: log, Credentials: creds,
			Serving: ex.built.Load,
			Handle: ex.xdsHandle(func(st []server.Status) {
				ex.metrics.SetStatus(st)
				versions.Statuses(st)
			}),
			Applied: versions.Applied,
		})
	})
	ex.serve(ctx, g)
	return g.Wait()
}

// extauth is a running extauth server's parts.
type extauth struct {
	log     zerolog.Logger
	o       extauthOptions
	reg     *server.Registry
	plugins *loader.Loader
	// spare is the trial-load child started ahead of time for the next plugin change.
	spare    *loader.TrialSpare
	metrics  *server.Metrics
	gatherer prometheus.Gatherer
	grpc     *grpc.Server
	authz    *server.Authorizer
	lis      net.Listener
	tracing  *tracing.Tracing
	// registerer takes the metrics of the parts wired after newExtauth.
	registerer prometheus.Registerer
	// closeTelemetry sends the spans and decision records still batched.
	closeTelemetry func()
	// stopFollowing ends the xDS stream (nil without --xds). A stopping server that was
	// ready follows the control plane for as long as it answers Checks: it stays among
	// the replicas whose acknowledgement a new AuthConfig's routes wait for, and has the
	// configs of the routes published meanwhile.
	stopFollowing context.CancelFunc
	// built is set once the first complete config was built.
	built atomic.Bool
	// watcher reports plugin files that appear or change. startFiles are the plugin
	// files found at the start, trial-loaded once the first complete config is built
	// (trialAheadOnce), off its path.
	watcher        *loader.Watcher
	startFiles     []string
	trialAheadOnce sync.Once
}

func newExtauth(log zerolog.Logger, o extauthOptions) (*extauth, error) {
	grpcOpts, err := extauthTLS(log, o.tlsDir)
	if err != nil {
		return nil, exit(2, fmt.Errorf("extauth: --tls-dir: %w", err))
	}
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, fmt.Errorf("extauth: %w", err)
	}
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), mtls.ExpiryCollector())
	server.RemoveStalePluginCopies(log)
	var authz *server.Authorizer // for the Opened hook, set below
	spare := &loader.TrialSpare{Log: log}
	plugins := loader.NewWithOptions(o.pluginDir, loader.Options{Trial: loader.TrialRunner{Spare: spare}, Warn: func(file string, ws []loader.Finding) {
		for _, w := range ws {
			log.Warn().Str("file", file).Str("check", w.Check).Str("host", w.Host).Str("plugin", w.Plugin).
				Str("detail", w.Detail).Msg("plugin loads, with a difference from the host build")
		}
	}, Opened: server.PluginOpened(log, o.maxPluginVersions, func() { authz.SetNotServing() }), TrialPassed: o.trialPassed, Log: log})
	b := extauthBuilder(log, plugins)
	tr, obs, closeTelemetry, err := newObserver(o, o.stdout, promReg)
	if err != nil {
		lis.Close()
		return nil, err
	}
	reg := server.NewRegistry(obs.Build(b.Build), log)
	m := server.NewMetrics(promReg)
	authz = server.NewAuthorizer(reg, log, m)
	authz.Observe(obs)
	e := &extauth{
		log: log, o: o, reg: reg, plugins: plugins, spare: spare, metrics: m, gatherer: promReg, lis: lis,
		grpc: server.NewGRPCServer(authz, append(grpcOpts, obs.Interceptor())...), authz: authz, tracing: tr, registerer: promReg,
		closeTelemetry: closeTelemetry,
	}
	e.watcher = &loader.Watcher{Dir: o.pluginDir, Log: log, Changed: func(files []string) {
		// Those no config uses yet are trial-loaded ahead; the others are opened now.
		go func() { plugins.TrialAheadInBackground(reg.UnusedPluginFiles(files)) }()
		m.SetStatus(reg.RebuildPlugins(files))
	}, Watching: func() {
		if err := spare.Start(loader.TrialRunner{}); err != nil {
			log.Warn().Err(err).Msg("plugin changes will start their trial-load child when they happen, which takes longer")
		}
	}}
	e.watcher.Snapshot()
	e.startFiles = e.watcher.Files()
	return e, nil
}

// extauthBuilder builds chains with plugins. OIDC steps log through log as it is:
// oidc.New adds their "step" field itself, and a second one would repeat the key.
func extauthBuilder(log zerolog.Logger, plugins server.PluginSource) *server.Builder {
	return &server.Builder{Plugins: plugins, OIDC: oidc.Options{Log: log}}
}

// apply serves the AuthConfigs of set.
func (e *extauth) apply(set *apiv1.Set) {
	e.metrics.SetStatus(server.ApplyResources(e.reg, set))
}

// xdsHandle is the xDS client's Handle: it applies each full state of ExtAuthConfigs
// (xdsclient.ExtAuthHandler, reporting statuses to status) and makes the server ready
// once the first one is built. The control plane sends a role nothing before its first
// complete state, and the first response of a stream holds every resource.
func (e *extauth) xdsHandle(status func([]server.Status)) func(string, map[string]*anypb.Any) error {
	handle := xdsclient.ExtAuthHandler(e.reg, status)
	return func(typeURL string, res map[string]*anypb.Any) error {
		err := handle(typeURL, res)
		e.configured()
		return err
	}
}

// configured makes the server ready, unless an apply was cut short by a stop; the
// first time, it has the plugin files found at the start trial-loaded (TrialAhead).
func (e *extauth) configured() {
	if !e.reg.Stopped() {
		e.built.Store(true)
		e.authz.Configured()
		e.trialAheadOnce.Do(func() { e.plugins.TrialAheadInBackground(e.startFiles) })
	}
}

// stopFollowingNow cuts short an apply under way and ends the xDS stream.
func (e *extauth) stopFollowingNow() {
	e.reg.Stop()
	if e.stopFollowing != nil {
		e.stopFollowing()
	}
}

// serve runs the gRPC server (and the admin server if asked) in g until ctx ends.
func (e *extauth) serve(ctx context.Context, g *errgroup.Group) {
	e.log.Info().Str("listen", e.lis.Addr().String()).Str("plugin_dir", e.o.pluginDir).Msg("extauth serving")
	g.Go(func() error { return e.grpc.Serve(e.lis) })
	g.Go(func() error {
		<-ctx.Done()
		e.log.Info().Msg("stopping: not ready from now on")
		if !e.built.Load() {
			// Nothing was sent Checks here yet: the first apply under way returns at once.
			e.stopFollowingNow()
		}
		e.authz.Leave(e.o.shutdownDelay)
		e.stopFollowingNow()
		server.Shutdown(e.grpc, e.authz, server.DefaultDrainTimeout, e.log)
		e.reg.Close()
		e.closeTelemetry()
		e.spare.Close()
		if err := e.plugins.Close(); err != nil {
			e.log.Warn().Err(err).Msg("removing the private plugin copies")
		}
		return nil
	})
	g.Go(func() error { e.reg.RetryRejectedEvery(ctx, server.RetryInterval, e.metrics.SetStatus); return nil })
	w := e.watcher
	g.Go(func() error {
		if err := w.Run(ctx); err != nil {
			e.log.Error().Err(err).Msg("plugin files will not be reloaded without a restart")
		}
		return nil
	})
	if e.o.admin != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /zpages", e.tracing.Handler())
		mux.Handle("GET /zpages/tracez", e.tracing.Handler())
		mux.Handle("/", server.AdminHandler(e.reg, e.gatherer, e.authz))
		serveHTTP(ctx, g, e.log, "admin", e.o.admin, mux)
	}
}

// serveHTTP runs an HTTP server in g until ctx ends.
func serveHTTP(ctx context.Context, g *errgroup.Group, log zerolog.Logger, name, addr string, h http.Handler) {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	g.Go(func() error {
		log.Info().Str("listen", addr).Msg(name + " serving")
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		return srv.Shutdown(context.Background())
	})
}
