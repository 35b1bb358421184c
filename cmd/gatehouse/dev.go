package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/examples"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/server/filesource"
)

type devOptions struct {
	extauth   extauthOptions
	resources string
	listen    string
	echo      string
}

func devCommand(_, stderr io.Writer) *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run extauth, a dev gateway and an echo upstream in one process",
		Long: "Runs everything on one machine so you can curl it: the extauth server, an HTTP gateway that\n" +
			"does what Envoy's ext_authz filter does with the generated route config, and an echo upstream.\n" +
			"Without --resources it serves the embedded examples (see examples/default). With --resources it\n" +
			"reads that YAML file or folder and reloads on change. Not a production proxy: production is Envoy.",
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
	cmd.Flags().StringVar(&o.resources, "resources", "", "YAML file or folder of resources (default: the embedded examples)")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:8080", "dev gateway HTTP address")
	cmd.Flags().StringVar(&o.echo, "echo-listen", "127.0.0.1:8090", "echo upstream address (empty to not start it)")
	return cmd
}

func runDev(ctx context.Context, log zerolog.Logger, o devOptions) error {
	ex, err := newExtauth(log.With().Str("component", "extauth").Logger(), o.extauth)
	log = log.With().Str("component", "dev").Logger()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(ex.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	defer conn.Close()
	gw := devgateway.New(authv3.NewAuthorizationClient(conn), log.With().Str("component", "gateway").Logger())
	apply := func(set *apiv1.Set) {
		ex.apply(set)
		applyGateway(log, gw, set)
	}

	g, ctx := errgroup.WithContext(ctx)
	if o.resources == "" {
		set, err := examples.Default()
		if err != nil {
			return fmt.Errorf("dev: embedded examples: %w", err)
		}
		if err := examples.PointEchoAt(set, o.echo); err != nil {
			return fmt.Errorf("dev: --echo-listen: %w", err)
		}
		apply(set)
	} else {
		src := &filesource.Source{Path: o.resources, Log: log, Apply: apply}
		if err := src.Load(); err != nil {
			return fmt.Errorf("dev: %w", err)
		}
		g.Go(func() error { return src.Watch(ctx) })
	}
	ex.serve(ctx, g)
	if o.echo != "" {
		serveHTTP(ctx, g, log, "echo upstream", o.echo, devgateway.Echo())
	}
	serveHTTP(ctx, g, log, "dev gateway", o.listen, gw)
	return g.Wait()
}

// applyGateway translates set for Envoy and hands the result to the gateway, logging
// every resource left out.
func applyGateway(log zerolog.Logger, gw *devgateway.Gateway, set *apiv1.Set) {
	env := translate.ToEnvoy(set)
	for name, err := range env.Rejected {
		log.Error().Str("resource", name).Err(err).Msg("resource rejected; not served")
	}
	timeout, _ := translate.RequestTimeout(set) // a bad value is reported with the AuthConfigs
	if err := gw.Update(devgateway.Config{Routes: env.Routes, Clusters: env.Clusters, CheckTimeout: timeout}); err != nil {
		log.Error().Err(err).Msg("gateway config")
	}
}
