package server_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gatehouse.dev/gatehouse/server"
)

// A client that gives up before its request is read is not a request that "cannot be
// decoded": that error line (and "Envoy gets codes.Internal") was logged for every
// Check a client cancelled early, which is neither true nor an error of ours.
func TestCheckHandlerLogsDecodeErrorsNotCancellations(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantError bool
	}{
		{name: "cancelled by the client", err: status.Error(codes.Canceled, "context canceled")},
		{name: "past the client's deadline", err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")},
		{name: "bytes that are no CheckRequest", err: status.Error(codes.Internal, "grpc: error unmarshalling request: proto: cannot parse invalid wire-format data"), wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			a := server.NewAuthorizer(registryOf(t, 0, nil), zerolog.New(&logs), nil)
			_, err := a.CheckHandler(context.Background(), func(any) error { return tt.err })
			if status.Code(err) != status.Code(tt.err) {
				t.Errorf("the handler returned %v, want the decoder's %v", err, tt.err)
			}
			if got := strings.Contains(logs.String(), `"level":"error"`); got != tt.wantError {
				t.Errorf("an error line logged: %v, want %v:\n%s", got, tt.wantError, logs.String())
			}
		})
	}
}
