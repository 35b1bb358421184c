package tracing

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Logger returns an OpenTelemetry logger named name whose records go over OTLP to the
// endpoint the standard variables name (OTEL_EXPORTER_OTLP_LOGS_* or
// OTEL_EXPORTER_OTLP_*), in batches, and the function that sends what is left and
// ends it.
func Logger(ctx context.Context, o Options, name string) (otellog.Logger, func() error, error) {
	if !Configured("LOGS") {
		return nil, nil, errors.New("tracing: no OTLP endpoint for logs: set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
	}
	var exp sdklog.Exporter
	var err error
	switch p := Protocol("LOGS"); p {
	case "grpc":
		exp, err = otlploggrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlploghttp.New(ctx)
	default:
		err = fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL %q: use grpc or http/protobuf", p)
	}
	if err != nil {
		return nil, nil, err
	}
	res, err := serviceResource(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
	return lp.Logger(name), func() error { return lp.Shutdown(context.Background()) }, nil
}

// serviceResource describes the process: service.name from o unless the environment
// says otherwise, the SDK, the host.
func serviceResource(ctx context.Context, o Options) (*resource.Resource, error) {
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", o.Service)), resource.WithFromEnv(),
		resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, err
	}
	return res, nil
}
