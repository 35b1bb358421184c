package devgateway_test

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/internal/envoysds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// certs makes a CA and the certificate folders of an installation (controlplane,
// extauth, proxy-gateway-proxy) and the SDS files of the proxy's folder; it returns the
// folders by name and the SDS folder.
func certs(t *testing.T) (map[string]string, string) {
	t.Helper()
	out := t.TempDir()
	gen, err := mtls.Generate(mtls.GenerateOptions{Out: out, TrustDomain: "gatehouse.test", Namespace: "gh",
		Proxies: []string{"gateway-proxy"}, CALifetime: time.Hour, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, g := range gen {
		dirs[g.Name] = g.Dir
	}
	sds := filepath.Join(out, "sds")
	if err := envoysds.Write(dirs["proxy-gateway-proxy"], sds); err != nil {
		t.Fatal(err)
	}
	return dirs, sds
}

// startTLSAuthz serves s over gRPC with mutual TLS, presenting the certificate of dir
// and admitting gateway proxies only, as extauth --tls-dir does.
func startTLSAuthz(t *testing.T, s *authzServer, dir string) string {
	t.Helper()
	f, err := mtls.Load(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.Creds(mtls.ServerCredentials(f, mtls.OnlyRoles("proxy"))))
	authv3.RegisterAuthorizationServer(g, s)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// tlsCluster is the extauth cluster as the control plane makes it with Settings
// spec.extauth.tls.sdsDir (translate.ExtauthzTLS).
func tlsCluster(t *testing.T, name, sdsDir string) *clusterv3.Cluster {
	c := http2Cluster(t, name)
	c.TransportSocket = translate.ExtauthzTLS(sdsDir)
	return c
}

// TestProxyExtAuthzMTLS: a cluster with the control plane's mutual-TLS transport socket
// reaches an extauth server that requires a proxy's certificate; whatever cannot make
// that handshake (no TLS, a server that is not extauth) denies, never allows.
func TestProxyExtAuthzMTLS(t *testing.T) {
	dirs, sds := certs(t)
	echo := tagged(t, "echo")
	authz := &authzServer{}
	tlsAddr := startTLSAuthz(t, authz, dirs["extauth"])
	impostor := &authzServer{} // a server presenting the control plane's certificate
	impostorAddr := startTLSAuthz(t, impostor, dirs["controlplane"])
	tests := []struct {
		name       string
		authz      []types.Resource
		wantStatus int
		wantChecks int
	}{
		{"mutual TLS", []types.Resource{tlsCluster(t, "ns.extauth", sds), cla(t, "ns.extauth", tlsAddr)}, http.StatusOK, 1},
		{"plain text to a TLS server", []types.Resource{http2Cluster(t, "ns.extauth"), cla(t, "ns.extauth", tlsAddr)}, http.StatusForbidden, 0},
		{"a server not naming the extauth role", []types.Resource{tlsCluster(t, "ns.extauth", sds), cla(t, "ns.extauth", impostorAddr)}, http.StatusForbidden, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := newProxy(t)
			feed(t, p, append([]types.Resource{edsCluster("ns.echo"), cla(t, "ns.echo", echo), httpListener(t, "ns.extauth", time.Second), appRoutes(t)}, tt.authz...)...)
			before := len(authz.requests())
			if resp, body := do(t, "GET", url+"/app", "app.example", nil); resp.StatusCode != tt.wantStatus {
				t.Errorf("secured route: %d %q, want %d", resp.StatusCode, body, tt.wantStatus)
			}
			if got := len(authz.requests()) - before; got != tt.wantChecks {
				t.Errorf("%d Checks reached extauth, want %d", got, tt.wantChecks)
			}
			if n := len(impostor.requests()); n > 0 {
				t.Errorf("%d Checks reached a server that is not extauth", n)
			}
		})
	}
}

// TestProxyRefusesClusterTLS: a transport socket the gateway cannot honour as Envoy
// would is NACKed with its field path, never served in plain text; a mutual-TLS cluster
// used for anything but ext_authz keeps its listener from serving.
func TestProxyRefusesClusterTLS(t *testing.T) {
	dirs, sds := certs(t)
	edit := func(f func(*tlsv3.UpstreamTlsContext)) *clusterv3.Cluster {
		ctx := envoysds.UpstreamTLS(sds, mtls.RoleExtauth)
		f(ctx)
		c := http2Cluster(t, "ns.extauth")
		c.TransportSocket = &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(t, ctx)}}
		return c
	}
	other := t.TempDir()
	if err := envoysds.Write(dirs["extauth"], other); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cluster *clusterv3.Cluster
		wantErr string
	}{
		{"the control plane's SAN", edit(func(c *tlsv3.UpstreamTlsContext) {
			c.CommonTlsContext.GetCombinedValidationContext().DefaultValidationContext = envoysds.UpstreamTLS(sds, mtls.RoleControlplane).
				GetCommonTlsContext().GetCombinedValidationContext().GetDefaultValidationContext()
		}), "match_typed_subject_alt_names: the gateway checks that the server names the extauth role"},
		{"TLS 1.2", edit(func(c *tlsv3.UpstreamTlsContext) {
			c.CommonTlsContext.TlsParams.TlsMinimumProtocolVersion = tlsv3.TlsParameters_TLSv1_2
		}), "tls_params: the gateway speaks TLS 1.3 only"},
		{"no SDS file", edit(func(c *tlsv3.UpstreamTlsContext) {
			c.CommonTlsContext.TlsCertificateSdsSecretConfigs[0] = envoysds.SecretConfig(t.TempDir(), envoysds.CertificateFile, envoysds.CertificateSecret)
		}), "tls_certificate_sds_secret_configs[0]: open"},
		{"certificate and CA of two folders", edit(func(c *tlsv3.UpstreamTlsContext) {
			c.CommonTlsContext.GetCombinedValidationContext().ValidationContextSdsSecretConfig = envoysds.SecretConfig(other, envoysds.ValidationFile, envoysds.ValidationSecret)
		}), "of one folder"},
		{"SNI", edit(func(c *tlsv3.UpstreamTlsContext) { c.Sni = "extauth" }), "typed_config.sni: not supported"},
		{"raw buffer", func() *clusterv3.Cluster {
			c := http2Cluster(t, "ns.extauth")
			c.TransportSocket = &corev3.TransportSocket{Name: "envoy.transport_sockets.raw_buffer"}
			return c
		}(), `transport_socket.name: "envoy.transport_sockets.raw_buffer" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newProxy(t)
			err := p.Handle(resourcev3.ClusterType, set(t, tt.cluster))
			if err == nil || !strings.HasPrefix(err.Error(), "cluster ns.extauth: transport_socket") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Handle: %v, want %q", err, tt.wantErr)
			}
		})
	}
	t.Run("a route to a mutual-TLS cluster", func(t *testing.T) {
		p, url := newProxy(t)
		authzAddr := startAuthz(t, &authzServer{})
		feed(t, p, http2Cluster(t, "ns.extauth"), cla(t, "ns.extauth", authzAddr), tlsCluster(t, "ns.echo", sds), cla(t, "ns.echo", tagged(t, "echo")),
			httpListener(t, "ns.extauth", time.Second), appRoutes(t))
		if p.Ready(devgateway.HTTPPort) {
			t.Error("the listener routing to a mutual-TLS cluster is served")
		}
		if resp, body := do(t, "GET", url+"/open", "app.example", nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("open route to a mutual-TLS cluster: %d %q, want 503 (not served)", resp.StatusCode, body)
		}
	})
}
