package controlplane_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// generateCerts runs `gatehouse certs generate` into a new folder and returns it.
func generateCerts(t *testing.T, args ...string) string {
	t.Helper()
	out := t.TempDir()
	certsCLI(t, out, args...)
	return out
}

func certsCLI(t *testing.T, out string, args ...string) {
	t.Helper()
	cmd := exec.Command(testbin.Gatehouse(t), append([]string{"certs", "generate", "--out", out, "--namespace", "gatehouse-system"}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatehouse certs generate: %v\n%s", err, b)
	}
}

// attempt is what one ADS client got: responses and the resources in them, and how the
// stream ended.
type attempt struct {
	responses, resources int
	bytes                int // of the resources received, serialized
	err                  error
}

// adsAttempt opens a delta ADS stream to addr with creds as node id claiming role (none
// when ""), subscribes to typeURL, and reads for at most wait.
func adsAttempt(t *testing.T, addr string, creds credentials.TransportCredentials, node, role, typeURL string, wait time.Duration) attempt {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var a attempt
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		a.err = err
		return a
	}
	n := &core.Node{Id: node}
	if role != "" {
		n.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{xds.RoleKey: structpb.NewStringValue(role)}}
	}
	if err := stream.Send(&discovery.DeltaDiscoveryRequest{Node: n, TypeUrl: typeURL, ResourceNamesSubscribe: []string{"*"}}); err != nil && !errors.Is(err, io.EOF) {
		a.err = err
		return a
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			a.err = err
			return a
		}
		a.responses++
		a.resources += len(resp.GetResources())
		for _, r := range resp.GetResources() {
			a.bytes += proto.Size(r)
		}
		_ = stream.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: typeURL, ResponseNonce: resp.GetNonce()})
	}
}

func clientCreds(t *testing.T, dir string) credentials.TransportCredentials {
	t.Helper()
	f, err := mtls.Load(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return mtls.ClientCredentials(f, mtls.RoleControlplane)
}

// plainCreds present the certificate of dir and trust its ca.crt, without reading
// roles (as a client of our CA that is not ours would).
func plainCreds(t *testing.T, dir string) credentials.TransportCredentials {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, mtls.CertFile), filepath.Join(dir, mtls.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, mtls.CAFile))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13})
}

// foreignCert writes into a new folder a certificate the CA of certs signed whose
// SPIFFE ID names no role (spiffe://cluster.local/ns/gatehouse-system/sa/default).
func foreignCert(t *testing.T, certs string) string {
	t.Helper()
	caCert, _ := os.ReadFile(filepath.Join(certs, mtls.CADir, mtls.CAFile))
	caKey, _ := os.ReadFile(filepath.Join(certs, mtls.CADir, mtls.CAKeyFile))
	ca, err := mtls.ParseCA(caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	extauth, err := os.ReadFile(filepath.Join(certs, "extauth", mtls.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(extauth)
	key, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("spiffe://cluster.local/ns/gatehouse-system/sa/default")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "no-role"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), URIs: []*url.URL{u},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.(crypto.Signer).Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testbin.WriteFile(t, filepath.Join(dir, mtls.CertFile), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	testbin.WriteFile(t, filepath.Join(dir, mtls.KeyFile), string(extauth))
	testbin.WriteFile(t, filepath.Join(dir, mtls.CAFile), string(caCert))
	return dir
}

// TestXDSRefusesWhoItCannotIdentify: with --xds-tls-dir, a client with no certificate,
// one of another CA, an expired one, one that names no role, and a proxy's certificate
// claiming extauth (under the real extauth's node id) or another proxy's role are each
// refused and receive no resource; an extauth certificate receives the ExtAuthConfigs
// and a proxy certificate its own role's resources. This was the hole: any pod that
// reached 9977 and wrote role: extauth received every OIDC client secret.
func TestXDSRefusesWhoItCannotIdentify(t *testing.T) {
	certs := generateCerts(t, "--proxy", "gateway-proxy,other")
	s := startSystemTLS(t, "alpha", certs)
	// A TLS Secret of the gateway proxy's HTTPS listener: what another proxy must never see.
	pair := filepath.Join(certs, "proxy-gateway-proxy")
	testbin.WriteFile(t, filepath.Join(s.dir, "tls.yaml"), fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: shop-tls, namespace: gatehouse-system}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n---\n"+
		"apiVersion: gateway.gatehouse.dev/v1\nkind: VirtualService\nmetadata: {name: shop, namespace: gatehouse-system}\nspec:\n  sslConfig: {secretRef: {name: shop-tls}}\n  virtualHost:\n    domains: [shop.example]\n    routes: [{routeAction: {single: {upstream: {name: echo}}}}]\n",
		base64.StdEncoding.EncodeToString(readFile(t, filepath.Join(pair, mtls.CertFile))), base64.StdEncoding.EncodeToString(readFile(t, filepath.Join(pair, mtls.KeyFile)))))
	s.expectStatus(t, "VirtualService", "shop", "Accepted", "gatehouse")
	s.expect(t, "/", alpha, http.StatusOK)

	otherCA := generateCerts(t)
	expired := t.TempDir()
	if err := os.CopyFS(filepath.Join(expired, mtls.CADir), os.DirFS(filepath.Join(certs, mtls.CADir))); err != nil {
		t.Fatal(err)
	}
	gen, err := mtls.Generate(mtls.GenerateOptions{Out: expired, TrustDomain: "cluster.local", Namespace: "gatehouse-system",
		CALifetime: time.Hour, Lifetime: time.Hour, Now: time.Now().Add(-3 * time.Hour)})
	if err != nil || len(gen) == 0 {
		t.Fatal(err)
	}
	noCert := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	realExtauth := xdsClientNode(t, s, xds.RoleExtauth)

	refused := []struct {
		name       string
		creds      credentials.TransportCredentials
		node, role string
		typeURL    string
		code       codes.Code // PermissionDenied when refused by identity; Unavailable when TLS refuses it
	}{
		{"no certificate", noCert, "attacker", xds.RoleExtauth, xds.ExtAuthConfigType, codes.Unavailable},
		{"another CA", clientCreds(t, filepath.Join(otherCA, "extauth")), "attacker", xds.RoleExtauth, xds.ExtAuthConfigType, codes.Unavailable},
		{"expired", clientCreds(t, filepath.Join(expired, "extauth")), "attacker", xds.RoleExtauth, xds.ExtAuthConfigType, codes.Unavailable},
		{"a certificate that names no role", plainCreds(t, foreignCert(t, certs)), "attacker", xds.RoleExtauth, xds.ExtAuthConfigType, codes.PermissionDenied},
		{"a proxy claiming extauth under extauth's node id", clientCreds(t, filepath.Join(certs, "proxy-gateway-proxy")), realExtauth, xds.RoleExtauth, xds.ExtAuthConfigType, codes.PermissionDenied},
		{"a proxy claiming another proxy's role", clientCreds(t, filepath.Join(certs, "proxy-other")), "attacker", xds.DefaultProxyRole, xds.SecretType, codes.PermissionDenied},
		{"extauth claiming a proxy's role", clientCreds(t, filepath.Join(certs, "extauth")), "attacker", xds.DefaultProxyRole, xds.SecretType, codes.PermissionDenied},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			a := adsAttempt(t, s.xds, tc.creds, tc.node, tc.role, tc.typeURL, 5*time.Second)
			if a.responses != 0 || a.bytes != 0 {
				t.Fatalf("received %d responses, %d resources (%d bytes)", a.responses, a.resources, a.bytes)
			}
			if got := status.Code(a.err); got != tc.code {
				t.Fatalf("stream ended with %v, want %v", a.err, tc.code)
			}
		})
	}

	t.Run("refusals are logged with subject, claimed role and peer, and counted", func(t *testing.T) {
		out := s.cp.Output()
		for _, want := range []string{`"claimed_role":"extauth"`, `"subject":"CN=gatehouse-system~gateway-proxy`, `"peer":"127.0.0.1:`, `"reason":"claims_another_role"`, `"reason":"no_role"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the control plane's log has no %s", want)
			}
		}
		metrics := s.adminGet(t, "/metrics")
		for _, want := range []string{`gatehouse_xds_refused_streams_total{reason="claims_another_role"} 3`, `gatehouse_xds_refused_streams_total{reason="no_role"} 1`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics has no %q", want)
			}
		}
		// The attempt under extauth's node id changed nothing: the AuthConfig still serves.
		s.expectStatus(t, "AuthConfig", "plugin-auth", "Accepted", "gatehouse")
	})

	t.Run("each role is served what is its own", func(t *testing.T) {
		a := adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "extauth")), "reader", "", xds.ExtAuthConfigType, 2*time.Second)
		if a.resources == 0 {
			t.Errorf("an extauth certificate (no role claimed: the certificate's is taken) received no ExtAuthConfig: %v", a.err)
		}
		a = adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "proxy-gateway-proxy")), "reader", xds.DefaultProxyRole, xds.ClusterType, 2*time.Second)
		if a.resources == 0 {
			t.Errorf("the gateway proxy's certificate received no cluster: %v", a.err)
		}
		a = adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "proxy-gateway-proxy")), "reader", xds.DefaultProxyRole, xds.ExtAuthConfigType, 2*time.Second)
		if a.resources != 0 || status.Code(a.err) != codes.InvalidArgument {
			t.Errorf("a proxy asking for ExtAuthConfigs got %d resources, %v; want none and InvalidArgument", a.resources, a.err)
		}
		a = adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "proxy-gateway-proxy")), "reader", xds.DefaultProxyRole, xds.SecretType, 2*time.Second)
		if a.resources != 1 {
			t.Errorf("the gateway proxy's certificate received %d Secrets, want its listener's one: %v", a.resources, a.err)
		}
		for _, typ := range []string{xds.ClusterType, xds.SecretType} {
			a = adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "proxy-other")), "reader", "gatehouse-system~other", typ, 2*time.Second)
			if a.resources != 0 {
				t.Errorf("another proxy's certificate received %d of the gateway proxy's %s", a.resources, typ)
			}
		}
	})

	t.Run("/snapshots/xds shows the identity each client presented", func(t *testing.T) {
		body := s.adminGet(t, "/snapshots/xds")
		for _, want := range []string{`"identity": "spiffe://cluster.local/ns/gatehouse-system/role/extauth"`, `"identity": "spiffe://cluster.local/ns/gatehouse-system/role/proxy/gateway-proxy"`} {
			if !strings.Contains(body, want) {
				t.Errorf("/snapshots/xds has no %s", want)
			}
		}
	})
}

// xdsClientNode is the node id the control plane knows a client of role by.
func xdsClientNode(t *testing.T, s *system, role string) string {
	t.Helper()
	var node string
	testbin.Eventually(t, settle, func() error {
		body := s.adminGet(t, "/snapshots/xds")
		i := strings.Index(body, `"role": "`+role+`"`)
		if i < 0 {
			return fmt.Errorf("no %s client in /snapshots/xds", role)
		}
		rest := body[i:]
		j := strings.Index(rest, `"node": "`)
		if j < 0 {
			return errors.New("no node")
		}
		rest = rest[j+len(`"node": "`):]
		node = rest[:strings.Index(rest, `"`)]
		return nil
	})
	return node
}

func (s *system) adminGet(t *testing.T, path string) string {
	t.Helper()
	_, body, err := testbin.Get("http://" + s.admin + path)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
