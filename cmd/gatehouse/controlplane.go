package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"gatehouse.dev/gatehouse/internal/gcpolicy"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/state"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/internal/tracing"
)

// Defaults of the control plane's listeners.
const (
	defaultXDSListen = "127.0.0.1:9977"
)

type controlplaneOptions struct {
	resources, xdsListen, admin, devAdmin string
	// xdsTLSDir is the certificate folder xDS is served with over mutual TLS ("": plain text).
	xdsTLSDir string
	// debounce is how long --resources must be quiet after a change before it is read.
	debounce time.Duration
	// state is the state file ("": the default for --resources); noState turns it off.
	state   string
	noState bool
	// ackBound is how long a new AuthConfig's routes wait for every extauth replica.
	ackBound time.Duration
	// stall is how long a stalled xDS client keeps its stream.
	stall time.Duration
}

func controlplaneCommand(_, stderr io.Writer) *cobra.Command {
	var o controlplaneOptions
	var ko kubeOptions
	cmd := &cobra.Command{
		Use:   "controlplane --resources DIR | --kube",
		Short: "Serve resources from a folder to Envoy and extauth over xDS (ADS)",
		Long: "Reads AuthConfig, VirtualService, Upstream, Secret and Settings resources from --resources\n" +
			"(watched; every *.yaml and *.yml file), gives each a status, and serves Envoy's listeners,\n" +
			"routes, clusters, endpoints and secrets and every extauth server's ExtAuthConfigs over ADS.\n" +
			"Clients name their role in node metadata \"role\": \"extauth\", or \"<namespace>~<proxy>\" for a\n" +
			"gateway proxy (" + xds.DefaultProxyRole + " serves every VirtualService).\n" +
			"The admin server (/snapshots/input|edge|proxies|xds|health, /statuses, /logging, /metrics,\n" +
			"/debug/pprof/) binds loopback unless told otherwise: it shows config (secrets redacted).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.resources == "") == !ko.enabled {
				return exit(2, errors.New("controlplane: one of --resources and --kube is required"))
			}
			log, err := logging.New(stderr, "controlplane")
			if err != nil {
				return exit(2, err)
			}
			if ko.enabled {
				st := openState(log, o.statePath(), "", "kube")
				src, err := newKubeSource(log, ko, st.memory())
				if err != nil {
					return exit(2, err)
				}
				return runControlplane(cmd.Context(), log, o, src, st)
			}
			if o.state == "" && !o.noState {
				if o.state, err = state.DefaultPath(o.resources); err != nil {
					return exit(2, fmt.Errorf("controlplane: %w", err))
				}
			}
			dir := &source.Dir{Path: o.resources, Log: log, Debounce: o.debounce}
			st := openState(log, o.statePath(), o.resources, "dir "+o.resources)
			if mem := st.memory(); mem != nil {
				dir.Memory = mem
			}
			return runControlplane(cmd.Context(), log, o, dir, st)
		},
	}
	admin := defaultAdminListen
	if v, ok := os.LookupEnv("START_STATS_SERVER"); ok {
		if on, _ := strconv.ParseBool(v); !on {
			admin = ""
		}
	}
	cmd.Flags().StringVar(&o.resources, "resources", "", "folder of resource YAML files (watched)")
	cmd.Flags().DurationVar(&o.debounce, "resources-debounce", source.DefaultDebounce,
		"how long --resources must be quiet after a change before it is read again (an editor's writes are read once; added to every edit's latency, except a file renamed into place from the folder or its parent, which is read after 1ms)")
	cmd.Flags().StringVar(&o.state, "state", "", "file that keeps what serves across restarts, so a resource that became invalid meanwhile keeps its last accepted version (holds Secrets: written 0600; default with --resources: under $XDG_STATE_HOME/gatehouse/controlplane, named after the folder; with --kube: none unless set)")
	cmd.Flags().DurationVar(&o.ackBound, "extauth-ack-timeout", pipeline.DefaultAckBound,
		"how long routes naming a new AuthConfig wait for every connected extauth replica to acknowledge it, and routes sending to a new Upstream for every proxy to acknowledge its cluster, before they reach the proxies anyway (the clients that lag are named in Warning statuses)")
	cmd.Flags().DurationVar(&o.stall, "xds-stall-timeout", xds.DefaultStallTimeout,
		"how long a response may wait to be written to an xDS client, or for its ACK or NACK, before the client's stream is dropped (logged and counted; the client may reconnect)")
	cmd.Flags().BoolVar(&o.noState, "no-state", false, "keep no state file: a restart serves only what decodes and validates then")
	cmd.Flags().StringVar(&o.xdsListen, "xds-listen", defaultXDSListen, "xDS (ADS) gRPC address")
	cmd.Flags().StringVar(&o.xdsTLSDir, "xds-tls-dir", "", "certificate folder (tls.crt, tls.key, ca.crt; re-read when it changes): serve xDS over TLS 1.3 to clients with a certificate of that CA only, each served the role its certificate names")
	cmd.Flags().StringVar(&o.devAdmin, "dev-admin-listen", defaultDevAdmin, "the deprecated developer API's address, served only while Settings spec.devMode is true (empty: never)")
	cmd.Flags().StringVar(&o.admin, "admin-listen", admin, "admin HTTP address (empty: off; off by default when START_STATS_SERVER=false)")
	addKubeFlags(cmd, &ko)
	return cmd
}

// controlplane is a running control plane's parts.
type controlplane struct {
	log      zerolog.Logger
	pipeline *pipeline.Pipeline
	xds      *xds.Server
	grpc     *grpc.Server
	lis      net.Listener
	gatherer prometheus.Gatherer
	metrics  *snapshots.Metrics
	tracing  *tracing.Tracing
	tracer   trace.Tracer
	// certs is the certificate folder xDS is served with (nil: plain text).
	certs *mtls.Folder
	// runCtx is the context of the run in progress (runs are serial), for its spans.
	runCtx context.Context
	// onSettings, when set before serve, follows the Settings in effect.
	onSettings func(translate.Settings)
	// started, when set, is called after the first run.
	started func()
}

func newControlplane(log zerolog.Logger, xdsListen, xdsTLSDir string, ackBound, stall time.Duration, st *cpState) (*controlplane, error) {
	grpcOpts := xds.GRPCServerOptions()
	xo := xds.Options{Log: log, StallTimeout: stall}
	xo.OnConnect = func(role, node string) { st.joined(log, role, node) }
	xo.OnDisconnect = func(role, node string) { st.left(log, role, node) }
	var certs *mtls.Folder
	if xdsTLSDir != "" {
		f, err := mtls.LoadAs(xdsTLSDir, mtls.RoleControlplane, log)
		if err != nil {
			return nil, exit(2, fmt.Errorf("controlplane: --xds-tls-dir: %w", err))
		}
		certs = f
		grpcOpts = append(grpcOpts, grpc.Creds(mtls.ServerCredentials(f, mtls.AnyMember)))
		xo.Authenticate = mtls.PeerFromContext
		log.Info().Str("id", f.Self().ID).Time("not_after", f.Self().NotAfter).Msg("xds: mutual TLS; each client is served the role its certificate names")
	}
	lis, err := net.Listen("tcp", xdsListen)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), mtls.ExpiryCollector())
	cp := &controlplane{log: log, lis: lis, gatherer: promReg, grpc: grpc.NewServer(grpcOpts...), certs: certs}
	if cp.tracing, err = tracing.New(context.Background(), tracing.Options{Service: "gatehouse-controlplane"}); err != nil {
		return nil, fmt.Errorf("controlplane: tracing: %w", err)
	}
	cp.tracer = cp.tracing.Tracer("gatehouse/controlplane")
	cp.runCtx = context.Background()
	xo.Registerer, xo.OnNack, xo.Tracer = promReg, cp.nack, cp.tracer
	xo.OnAcked = func(role, typeURL string) {
		switch typeURL {
		case xds.ExtAuthConfigType, xds.RouteType, xds.VirtualHostType, xds.ClusterType, xds.EndpointType:
		default:
			return
		}
		if cp.pipeline != nil {
			cp.pipeline.Acked()
		}
	}
	cp.xds = xds.NewServer(xo)
	po := pipeline.Options{Log: log, PublishChanged: cp.publish, OnSettings: func(s translate.Settings) {
		if cp.onSettings != nil {
			cp.onSettings(s)
		}
	}}
	po.AckBound = ackBound
	po.ProxiesCaughtUp = func() bool { return cp.xds.CaughtUp(xds.RouteType) && cp.xds.CaughtUp(xds.VirtualHostType) }
	po.ExtauthAcked = func(f func(string, map[string]string)) { cp.xds.EachServing(xds.RoleExtauth, xds.ExtAuthConfigType, f) }
	po.ProxiesAcked = func(typeURL string, f func(string, map[string]string)) {
		cp.xds.EachAcked(xds.DefaultProxyRole, typeURL, f)
	}
	po.BookProxyAcks = func(cluster string, on bool) {
		for _, typeURL := range []string{xds.ClusterType, xds.EndpointType} {
			if on {
				cp.xds.Book(typeURL, cluster)
			} else {
				cp.xds.Unbook(typeURL, cluster)
			}
		}
	}
	if st != nil {
		if st.mem != nil {
			po.Memory = st.mem
		}
		po.OnServing = st.saver.Offer
		po.Replicas = st.remembered
	}
	cp.pipeline = pipeline.New(po)
	cp.metrics = snapshots.NewMetrics(promReg, cp.pipeline.Overview)
	cp.xds.Register(cp.grpc)
	return cp, nil
}

// serve runs the source through the pipeline and the xDS server in g until ctx ends.
func (cp *controlplane) serve(ctx context.Context, g *errgroup.Group, src source.Source) {
	cp.log.Info().Str("listen", cp.lis.Addr().String()).Msg("xds serving")
	g.Go(func() error { return cp.grpc.Serve(cp.lis) })
	g.Go(func() error {
		<-ctx.Done()
		cp.grpc.Stop()         // xDS streams never end by themselves; clients reconnect
		_ = cp.tracing.Close() // sends the spans still batched
		return nil
	})
	g.Go(func() error { cp.pipeline.Regate(ctx); return nil })
	g.Go(func() error {
		if err := src.Run(ctx, cp.apply); err != nil && ctx.Err() == nil {
			return fmt.Errorf("controlplane: resources: %w", err)
		}
		return nil
	})
}

// apply runs the pipeline on one Input and records the run's metrics.
// Each run is a span "controlplane.apply" with a child for validation and translation
// and one per role published, for /zpages.
func (cp *controlplane) apply(in *source.Input) {
	ctx, span := cp.tracer.Start(context.Background(), "controlplane.apply",
		trace.WithAttributes(attribute.Int("resources", in.Resources.Len()), attribute.Int("problems", len(in.Problems))))
	cp.runCtx = ctx
	start := time.Now()
	cp.pipeline.Apply(in)
	st := cp.pipeline.Overview()
	_, tr := cp.tracer.Start(ctx, "controlplane.translate", trace.WithTimestamp(start))
	tr.End(trace.WithTimestamp(start.Add(st.Translate)))
	span.SetAttributes(attribute.Int64("version", int64(st.Version)))
	span.End()
	cp.metrics.Observe(st)
	if cp.started != nil {
		cp.started()
	}
}

// publish hands one role's resources, and what changed in them, to the xDS server
// within the run's span.
func (cp *controlplane) publish(role string, r xds.Resources, changed xds.Changed) error {
	n := 0
	for _, named := range r {
		n += len(named)
	}
	_, span := cp.tracer.Start(cp.runCtx, "xds.publish", trace.WithAttributes(attribute.String("role", role), attribute.Int("resources", n)))
	defer span.End()
	err := cp.xds.PublishChanged(role, r, changed)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// nack records a client's NACK on the resources, and as a span.
func (cp *controlplane) nack(n xds.Nack) {
	_, span := cp.tracer.Start(context.Background(), "xds.nack", trace.WithAttributes(
		attribute.String("role", n.Role), attribute.String("node", n.NodeID), attribute.String("type", n.TypeURL), attribute.Int("resources", len(n.Names))))
	span.SetStatus(codes.Error, "rejected by the client")
	cp.pipeline.RecordNack(n)
	span.End()
}

// statePath is the state file to use ("": none).
func (o controlplaneOptions) statePath() string {
	if o.noState {
		return ""
	}
	return o.state
}

func runControlplane(ctx context.Context, log zerolog.Logger, o controlplaneOptions, src source.Source, st *cpState) error {
	cp, err := newControlplane(log, o.xdsListen, o.xdsTLSDir, o.ackBound, o.stall, st)
	if err != nil {
		return err
	}
	if b, ok := src.(statusWriter); ok {
		// The Kubernetes source writes the statuses back, with how far each reached.
		b.BindPipeline(cp.pipeline, func(r *validate.Resource) string {
			return snapshots.DataPlane(cp.snapshotOptions(), []*validate.Resource{r})[0]
		})
	}
	g, ctx := errgroup.WithContext(ctx)
	if o.devAdmin != "" {
		d := newDevAdmin(log, o.devAdmin, cp.snapshotOptions())
		cp.onSettings = d.settings
		defer d.close()
	}
	cp.started = gcpolicy.Start()
	if st != nil {
		g.Go(func() error { st.saver.Run(ctx); return nil })
	}
	cp.serve(ctx, g, src)
	if o.admin != "" {
		serveHTTP(ctx, g, log, "admin", o.admin, controlplaneAdmin(cp))
	}
	return g.Wait()
}
