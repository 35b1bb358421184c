package xds_test

import (
	"fmt"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestPushesAreTraced: every response pushed to a client is a span naming the role,
// node, type and how many resources it carried (issue 10: /zpages shows the pushes).
func TestPushesAreTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := xds.NewServer(xds.Options{Log: testLog(t), Tracer: tp.Tracer("test")})
	addr := serve(t, s)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(3)); err != nil {
		t.Fatal(err)
	}
	c := newDelta(t, addr, node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	c.answer(c.next(), "")
	testbin.Eventually(t, 10*time.Second, func() error {
		for _, sp := range rec.Ended() {
			if sp.Name() != "xds.push" {
				continue
			}
			attrs := map[string]string{}
			for _, a := range sp.Attributes() {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			if attrs["role"] == xds.RoleExtauth && attrs["node"] == "extauth-1" && attrs["type"] == xds.ExtAuthConfigType && attrs["resources"] == "3" {
				return nil
			}
			return fmt.Errorf("push span attributes %v", attrs)
		}
		return fmt.Errorf("no xds.push span among %d", len(rec.Ended()))
	})
}
