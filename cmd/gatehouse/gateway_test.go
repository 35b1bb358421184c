package main

import (
	"io"
	"strings"
	"testing"
)

func TestGatewayFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no control plane", []string{"gateway"}, "gateway: --xds is required"},
		{"role without a namespace", []string{"gateway", "--xds", "127.0.0.1:1", "--role", "proxy"}, `gateway: --role "proxy": want <namespace>~<proxy name>`},
		{"role with an empty name", []string{"gateway", "--xds", "127.0.0.1:1", "--role", "ns~"}, `gateway: --role "ns~"`},
		{"no listen address", []string{"gateway", "--xds", "127.0.0.1:1", "--listen", ""}, "gateway: --listen is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, err := runWith(tt.args, io.Discard, io.Discard)
			if code != 2 || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("exit %d, error %v; want 2 and %q", code, err, tt.wantErr)
			}
		})
	}
}
