package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/internal/tracing"
	"gatehouse.dev/gatehouse/server/oidc"
	"gatehouse.dev/gatehouse/server/telemetry"
)

// extauthService is extauth's service.name in traces and logs.
const extauthService = "gatehouse-extauth"

// decisionLogOptions are the --decision-log flags.
type decisionLogOptions struct {
	to         string
	sample     float64
	byConfig   map[string]string
	perSecond  float64
	headers    []string
	rawHeaders bool
}

func (o *decisionLogOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.to, "decision-log", "", "write a record of each decided Check: stdout (JSON lines) or otlp (OTLP logs, to the OTEL_EXPORTER_OTLP_* endpoint); empty: off")
	f.Float64Var(&o.sample, "decision-log-sample", 1, "share of decided Checks (0 to 1) recorded")
	f.StringToStringVar(&o.byConfig, "decision-log-sample-config", nil, "share recorded for a config_id, overriding --decision-log-sample (e.g. team.web=0.1,team.api=1)")
	f.Float64Var(&o.perSecond, "decision-log-rate", 100, "records written per second at most (in bursts of as many); the others are counted in gatehouse_extauth_decision_logs_dropped_total; 0: no limit")
	f.StringSliceVar(&o.headers, "decision-log-headers", nil, "request headers whose values a record carries (hashed unless --decision-log-raw-headers); no other header, token or cookie value is written")
	f.BoolVar(&o.rawHeaders, "decision-log-raw-headers", false, "write the --decision-log-headers values as they are, not hashed")
}

// decisionLog returns the decision log the flags ask for (nil: off) and what ends it.
func (o *decisionLogOptions) decisionLog(ctx context.Context, stdout io.Writer, reg prometheus.Registerer) (*telemetry.DecisionLog, func() error, error) {
	bad := func(format string, args ...any) error { return exit(2, fmt.Errorf("extauth: "+format, args...)) }
	if o.sample < 0 || o.sample > 1 {
		return nil, nil, bad("--decision-log-sample %g: use a share from 0 to 1", o.sample)
	}
	byConfig := map[string]float64{}
	for id, v := range o.byConfig {
		var r float64
		if _, err := fmt.Sscan(v, &r); err != nil || r < 0 || r > 1 {
			return nil, nil, bad("--decision-log-sample-config %s=%s: use a share from 0 to 1", id, v)
		}
		byConfig[id] = r
	}
	opts := telemetry.DecisionOptions{Out: stdout, Sample: o.sample, SampleByConfig: byConfig, PerSecond: o.perSecond,
		Headers: o.headers, RawHeaders: o.rawHeaders, Registerer: reg}
	closeFn := func() error { return nil }
	switch o.to {
	case "":
		return nil, closeFn, nil
	case "stdout":
	case "otlp":
		logger, closeLogs, err := tracing.Logger(ctx, tracing.Options{Service: extauthService}, "gatehouse/extauth/decisions")
		if err != nil {
			return nil, nil, fmt.Errorf("extauth: --decision-log otlp: %w", err)
		}
		opts.Emit, closeFn = telemetry.EmitOTLP(logger), closeLogs
	default:
		return nil, nil, bad("--decision-log %q: use stdout or otlp", o.to)
	}
	return telemetry.NewDecisionLog(opts), closeFn, nil
}

// newObserver returns extauth's telemetry: its Tracing, the Observer to wire, and what
// ends them (sending the spans and records still batched).
func newObserver(o extauthOptions, stdout io.Writer, reg prometheus.Registerer) (*tracing.Tracing, *telemetry.Observer, func(), error) {
	ctx := context.Background()
	tr, err := tracing.New(ctx, tracing.Options{Service: extauthService})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("extauth: tracing: %w", err)
	}
	if stdout == nil {
		stdout = os.Stdout
	}
	decisions, closeLogs, err := o.decisions.decisionLog(ctx, stdout, reg)
	if err != nil {
		return nil, nil, nil, err
	}
	reg.MustRegister(oidc.Collectors()...)
	obs := telemetry.New(telemetry.Options{Tracer: tr.Tracer("gatehouse/extauth"), Ratio: o.traceRatio,
		Exporting: tr.Exporting(), SamplerDecides: tr.SamplerFromEnv(), Registerer: reg, Decisions: decisions})
	return tr, obs, func() { _ = closeLogs(); _ = tr.Close() }, nil
}
