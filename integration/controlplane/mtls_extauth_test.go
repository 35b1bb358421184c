package controlplane_test

import (
	"crypto/tls"
	"path/filepath"
	"testing"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// TestExtauthServesChecksOverMutualTLS: with --tls-dir, extauth answers Checks over
// mutual TLS to a gateway proxy's certificate only: the control plane's or extauth's
// own certificate, another CA's, and a client without one are refused before a Check
// is answered.
func TestExtauthServesChecksOverMutualTLS(t *testing.T) {
	certs := generateCerts(t)
	otherCA := generateCerts(t)
	dir := t.TempDir()
	testbin.WriteFile(t, filepath.Join(dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "alpha"))
	addr := testbin.FreeAddr(t)
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "extauth", "--config", dir, "--plugin-dir", testbin.SamplePlugins(t),
		"--listen", addr, "--tls-dir", filepath.Join(certs, "extauth"))
	testbin.WaitTCP(t, p, addr, settle)

	dial := func(creds credentials.TransportCredentials) *checker {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return &checker{client: authv3.NewAuthorizationClient(conn)}
	}
	folder := func(dir string) *mtls.Folder {
		f, err := mtls.Load(dir, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}

	proxy := dial(mtls.ClientCredentials(folder(filepath.Join(certs, "proxy-gateway-proxy")), mtls.RoleExtauth))
	testbin.Eventually(t, settle, func() error {
		return proxy.verdicts("gatehouse-system.plugin-auth", map[string]code.Code{"alpha": code.Code_OK, "nope": code.Code_PERMISSION_DENIED})
	})

	for name, creds := range map[string]credentials.TransportCredentials{
		"the control plane's certificate": mtls.ClientCredentials(folder(filepath.Join(certs, "controlplane")), mtls.RoleExtauth),
		"another CA's proxy certificate":  mtls.ClientCredentials(folder(filepath.Join(otherCA, "proxy-gateway-proxy")), mtls.RoleExtauth),
		"no certificate":                  credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}),
		"plain text":                      insecure.NewCredentials(),
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := dial(creds).check("gatehouse-system.plugin-auth", "alpha"); err == nil {
				t.Fatalf("a Check was answered (%v)", got)
			}
		})
	}
}
