package observe_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// receiver is an OTLP receiver, as an OpenTelemetry Collector runs one: the trace and
// logs services over gRPC, and /v1/traces and /v1/logs over HTTP (protobuf). It keeps
// every span and log record it is sent, with the service.name of their resource.
type receiver struct {
	coltrace.UnimplementedTraceServiceServer

	mu    sync.Mutex
	spans []receivedSpan
	logs  []*logspb.LogRecord
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

// startGRPCReceiver serves OTLP over gRPC on loopback and returns its address.
func startGRPCReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	r := &receiver{}
	addr := testbin.FreeAddr(t)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, r)
	collogs.RegisterLogsServiceServer(srv, logsService{r: r})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return r, addr
}

// startHTTPReceiver serves OTLP over HTTP (protobuf) on loopback and returns its address.
func startHTTPReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	r := &receiver{}
	addr := testbin.FreeAddr(t)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltrace.ExportTraceServiceRequest
		if !decode(w, req, &in) {
			return
		}
		resp, _ := r.Export(req.Context(), &in)
		reply(w, resp)
	})
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var in collogs.ExportLogsServiceRequest
		if !decode(w, req, &in) {
			return
		}
		r.addLogs(&in)
		reply(w, &collogs.ExportLogsServiceResponse{})
	})
	srv := &http.Server{Addr: addr, Handler: mux}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r, addr
}

func decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	body, err := io.ReadAll(req.Body)
	if err == nil {
		err = proto.Unmarshal(body, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Export implements the OTLP trace service.
func (r *receiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := stringAttr(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service: service, span: s})
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// logsService adapts receiver to the OTLP logs service, whose method is also Export.
type logsService struct {
	collogs.UnimplementedLogsServiceServer
	r *receiver
}

func (l logsService) Export(_ context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	l.r.addLogs(req)
	return &collogs.ExportLogsServiceResponse{}, nil
}

func (r *receiver) addLogs(req *collogs.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			r.logs = append(r.logs, sl.GetLogRecords()...)
		}
	}
}

func (r *receiver) received() ([]receivedSpan, []*logspb.LogRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedSpan(nil), r.spans...), append([]*logspb.LogRecord(nil), r.logs...)
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}
