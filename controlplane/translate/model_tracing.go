package translate

import (
	"fmt"
	"net"
	"strconv"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// CollectorCluster is the cluster of the OTLP collector the gateway proxies send spans
// to. Upstream clusters are named "<namespace>.<name>", so it can never be one of them.
const CollectorCluster = "gatehouse-otlp-collector"

// Tracing defaults.
const (
	DefaultTraceSamplePercent = 1.0
	DefaultTraceServiceName   = "gatehouse-gateway-proxy"
)

// Tracing is Settings spec.tracing: the gateway proxies trace requests and send their
// spans to an OTLP/gRPC collector.
type Tracing struct {
	// Collector is the OTLP/gRPC receiver.
	Collector Host `json:"collector"`
	// SamplePercent is the share of requests traced, 0 to 100.
	SamplePercent float64 `json:"samplePercent"`
	ServiceName   string  `json:"serviceName"`
}

// key is what the listeners and the collector's cluster are built from ("" for nil).
func (t *Tracing) key() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d|%g|%s", t.Collector.Addr, t.Collector.Port, t.SamplePercent, t.ServiceName)
}

// tracingOf checks and translates spec.tracing.
func tracingOf(t *apiv1.TracingSettings, errs *fieldErrors) *Tracing {
	out := &Tracing{SamplePercent: DefaultTraceSamplePercent, ServiceName: DefaultTraceServiceName}
	ok := true
	host, port, err := net.SplitHostPort(t.OTLPCollector)
	p, perr := strconv.ParseUint(port, 10, 16)
	switch {
	case t.OTLPCollector == "":
		errs.add("spec.tracing.otlpCollector", "is required: host:port of an OTLP/gRPC receiver, such as otel-collector.monitoring:4317")
		ok = false
	case err != nil || host == "" || perr != nil || p == 0:
		errs.addf("spec.tracing.otlpCollector", "%q is not host:port, such as otel-collector.monitoring:4317", t.OTLPCollector)
		ok = false
	default:
		out.Collector = Host{Addr: host, Port: uint32(p)}
	}
	if r := t.SamplePercent; r != nil {
		if *r >= 0 && *r <= 100 {
			out.SamplePercent = *r
		} else {
			errs.addf("spec.tracing.samplePercent", "%g is not a percentage from 0 to 100", *r)
			ok = false
		}
	}
	if t.ServiceName != "" {
		out.ServiceName = t.ServiceName
	}
	if !ok {
		return nil
	}
	return out
}
