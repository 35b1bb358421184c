package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter is the OTLP span exporter the standard environment variables describe, or
// nil when they name none: OTEL_TRACES_EXPORTER=none, or neither
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT set (nor
// OTEL_TRACES_EXPORTER=otlp, which uses the protocol's default endpoint).
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL chooses grpc or
// http/protobuf (the default, as the specification says); headers, timeout,
// compression, certificates and insecure are read by the exporter itself.
func Exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if !Configured("TRACES") {
		return nil, nil
	}
	switch p := Protocol("TRACES"); p {
	case "grpc":
		return otlptracegrpc.New(ctx)
	case "http/protobuf":
		return otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL %q: use grpc or http/protobuf", p)
	}
}

// Configured says whether the environment asks for OTLP export of signal (TRACES or
// LOGS).
func Configured(signal string) bool {
	switch strings.TrimSpace(os.Getenv("OTEL_" + signal + "_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Protocol is the OTLP protocol the environment names for signal (TRACES or LOGS).
func Protocol(signal string) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return "http/protobuf"
}

// envSampler is OTEL_TRACES_SAMPLER, which the SDK reads itself when it is set.
func envSampler() string { return strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")) }
