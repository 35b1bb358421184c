package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
)

// EmitOTLP returns a DecisionOptions.Emit that writes each record as an OpenTelemetry
// log record on logger: body "decision", one attribute per field, the trace context
// from ctx (the Check's span, or Envoy's when it was not traced here).
func EmitOTLP(logger otellog.Logger) func(ctx context.Context, e *Entry) {
	return func(ctx context.Context, e *Entry) {
		var r otellog.Record
		r.SetTimestamp(e.Time)
		r.SetObservedTimestamp(e.Time)
		r.SetSeverity(otellog.SeverityInfo)
		if e.Decision != "allow" {
			r.SetSeverity(otellog.SeverityWarn)
		}
		r.SetEventName("gatehouse.extauth.decision")
		r.SetBody(attribute.StringValue("decision"))
		steps := make([]attribute.Value, len(e.Steps))
		for i, s := range e.Steps {
			steps[i] = attribute.MapValue(attribute.String("step", s.Step), attribute.Float64("duration_ms", s.DurationMS))
		}
		headers := make([]attribute.KeyValue, 0, len(e.Headers))
		for k, v := range e.Headers {
			headers = append(headers, attribute.String(k, v))
		}
		r.AddAttributes(
			attribute.String("request_id", e.RequestID), attribute.String("trace_id", e.TraceID),
			attribute.String("config_id", e.ConfigID), attribute.String("method", e.Method),
			attribute.String("host", e.Host), attribute.String("path", e.Path),
			attribute.String("decision", e.Decision), attribute.String("outcome", e.Outcome),
			attribute.String("step", e.Step), attribute.Int("status", e.Status), attribute.String("reason", e.Reason),
			attribute.Float64("duration_ms", e.DurationMS),
			attribute.Slice("steps", steps...), attribute.Map("headers", headers...),
		)
		logger.Emit(ctx, r)
	}
}
