package oidc

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// storeErrors counts session store operations that failed to reach or use Redis.
var storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_extauth_session_store_errors_total",
	Help: "OIDC session store operations (load, save, delete, first_use) that failed to reach or use Redis; logins and logged-in requests then deny.",
}, []string{"operation"})

// Collectors are the OIDC step's metrics, for the extauth server's registry: store
// errors, and the health of each session store's Redis. Every operation's error series
// is there from the start, at 0, so that a rate over it is defined.
func Collectors() []prometheus.Collector {
	for _, op := range []string{"load", "save", "delete", "first_use"} {
		storeErrors.WithLabelValues(op)
	}
	return []prometheus.Collector{storeErrors, storeHealth{}}
}

// storeFailed counts a failed store operation and returns err.
func storeFailed(op string, err error) error {
	storeErrors.WithLabelValues(op).Inc()
	return err
}

// noEnd ends no span.
func noEnd(error) {}

// span starts a child span named name when the Check is traced (ctx's span records),
// and returns the context for the call and what ends the span. Attributes never carry
// a token, a code, a cookie or a session key.
func span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noEnd
	}
	ctx, s := parent.TracerProvider().Tracer("gatehouse/oidc").Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			s.SetStatus(codes.Error, name+" failed")
		}
		s.End()
	}
}

// redisSpan is span for a Redis command.
func redisSpan(ctx context.Context, op string) (context.Context, func(error)) {
	return span(ctx, "redis "+op, attribute.String("db.system.name", "redis"), attribute.String("db.operation.name", op))
}
