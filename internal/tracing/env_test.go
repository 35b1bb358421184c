package tracing_test

import (
	"context"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/internal/tracing"
)

// TestExporterFromEnvironment: export is on only when the standard variables name an
// endpoint (or OTEL_TRACES_EXPORTER=otlp), off with OTEL_TRACES_EXPORTER=none, over the
// protocol they name, and an unknown protocol is an error that names the fix.
func TestExporterFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    bool
		wantErr string
	}{
		{name: "nothing set"},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, want: true},
		{name: "traces endpoint, grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: true},
		{name: "exporter otlp without endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: true},
		{name: "exporter none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "logs endpoint only", env: map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "json protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, wantErr: "use grpc or http/protobuf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
				"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_SAMPLER"} {
				t.Setenv(k, tc.env[k])
			}
			tr, err := tracing.New(context.Background(), tracing.Options{Service: "test"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New = %v, want an error holding %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if tr.Exporting() != tc.want {
				t.Errorf("Exporting() = %v, want %v", tr.Exporting(), tc.want)
			}
			if tr.SamplerFromEnv() {
				t.Error("SamplerFromEnv() with OTEL_TRACES_SAMPLER unset")
			}
		})
	}
}
