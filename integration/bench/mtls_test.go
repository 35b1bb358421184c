package main

import (
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

func TestMTLSStartGoal(t *testing.T) {
	arm := func(round int, mode string, readyMs int) cpArm {
		return cpArm{Round: round, Mode: mode, cpStart: cpStart{ReadyProxy: time.Duration(readyMs) * time.Millisecond}}
	}
	tests := []struct {
		name        string
		arms        []cpArm
		want        []float64
		wantVerdict string
	}{
		{
			name: "median of per-round ratios, whatever order the modes ran in",
			arms: []cpArm{
				arm(1, modePlain, 1000), arm(1, modeMTLS, 1050),
				arm(2, modeMTLS, 1300), arm(2, modePlain, 1000), // the outlier round
				arm(3, modePlain, 1200), arm(3, modeMTLS, 1260),
			},
			want: []float64{1.05, 1.3, 1.05}, wantVerdict: "**undecided**: the median's 75 % interval is 1.05× to 1.30×",
		},
		{
			name: "met when every round is within",
			arms: []cpArm{
				arm(1, modePlain, 1000), arm(1, modeMTLS, 1050), arm(2, modeMTLS, 1080), arm(2, modePlain, 1000),
			},
			want: []float64{1.05, 1.08}, wantVerdict: "met",
		},
		{
			name: "a round without plain text counts for no ratio",
			arms: []cpArm{arm(1, modePlain, 1000), arm(1, modeMTLS, 1200), arm(2, modeMTLS, 900)},
			want: []float64{1.2}, wantVerdict: "**not met**",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := (&mtlsResult{N: 10000, Starts: tt.arms}).goals()
			if len(gs) != 1 {
				t.Fatalf("goals() = %d goals, want 1", len(gs))
			}
			if diff := cmp.Diff(tt.want, gs[0].Rounds, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("rounds (-want +got):\n%s", diff)
			}
			if got := gs[0].verdict(); gs[0].Target != 1.1 || got != tt.wantVerdict {
				t.Errorf("target %v, verdict %q; want 1.1, %q", gs[0].Target, got, tt.wantVerdict)
			}
		})
	}
}

// TestRelayPresentsTheRoleCertificate checks that a client of each role reaches a
// server of mutual TLS through the relay with its own role's certificate, over h2.
func TestRelayPresentsTheRoleCertificate(t *testing.T) {
	certs := t.TempDir()
	if _, err := mtls.Generate(mtls.GenerateOptions{Out: certs, TrustDomain: "cluster.local", Namespace: "gatehouse-system",
		Proxies: []string{"gateway-proxy"}, CALifetime: time.Hour, Lifetime: time.Hour}); err != nil {
		t.Fatal(err)
	}
	f, err := mtls.Load(filepath.Join(certs, mtls.RoleControlplane), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	cfg := mtls.ServerConfig(f, mtls.AnyMember)
	cfg.NextProtos = []string{"h2"}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	roles := make(chan string, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			role := "handshake failed"
			if tc.Handshake() == nil && tc.ConnectionState().NegotiatedProtocol == "h2" {
				p, _ := mtls.FromCert(tc.ConnectionState().PeerCertificates[0])
				role = p.Identity.Role
			}
			roles <- role
			_, _ = io.Copy(c, c)
			c.Close()
		}
	}()
	for _, role := range []string{xds.RoleExtauth, xds.DefaultProxyRole} {
		t.Run(role, func(t *testing.T) {
			addr, r, err := xdsLink{relay: true, certs: certs}.dial(role, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
				t.Fatalf("echo through the relay = %q, %v; want ping", got, err)
			}
			if got := <-roles; got != role {
				t.Errorf("the server saw the role %q, want %q", got, role)
			}
		})
	}
}
