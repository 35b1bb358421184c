package devgateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"gatehouse.dev/gatehouse/devgateway"
)

type tlsContext = tlsv3.DownstreamTlsContext

// downstreamTLS is a TLS transport socket whose certificate is the SDS secret name.
func downstreamTLS(t *testing.T, secret string, edit func(*tlsContext)) *corev3.TransportSocket {
	d := &tlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: secret, SdsConfig: ads()}},
	}}
	if edit != nil {
		edit(d)
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(t, d)}}
}

// selfSigned returns a certificate for names and its PEM chain and key.
func selfSigned(t *testing.T, names ...string) (*x509.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

func tlsSecret(name string, chain, key []byte) *tlsv3.Secret {
	return &tlsv3.Secret{Name: name, Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: chain}},
		PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: key}},
	}}}
}

// TestProxyTLSListener: the "https" listener on 8443 is not served while its SDS
// certificate is missing, and is served over TLS once it arrives, the filter chain
// chosen by server name.
func TestProxyTLSListener(t *testing.T) {
	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
	t.Cleanup(p.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, devgateway.HTTPSPort, lis) }()
	t.Cleanup(func() { cancel(); <-done })

	appCert, appChain, appKey := selfSigned(t, "app.example")
	otherCert, otherChain, otherKey := selfSigned(t, "other.example")
	chain := func(name, secret string, serverNames ...string) *listenerv3.FilterChain {
		return &listenerv3.FilterChain{
			FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: serverNames},
			TransportSocket:  downstreamTLS(t, secret, nil),
			Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{
				TypedConfig: mustAny(t, hcm(t, name, routerFilter(t))),
			}}},
		}
	}
	l := listenerWith(t, "https", devgateway.HTTPSPort, hcm(t, "unused"))
	l.FilterChains = []*listenerv3.FilterChain{chain("https-app", "app-cert", "app.example"), chain("https-other", "other-cert", "other.example")}
	routes := func(name, tag string) *routev3.RouteConfiguration {
		return &routev3.RouteConfiguration{Name: name, VirtualHosts: []*routev3.VirtualHost{vhost(name, []string{"*"}, openRoute(t, "/", "ns."+tag))}}
	}
	feed(t, p, edsCluster("ns.app"), edsCluster("ns.other"), cla(t, "ns.app", tagged(t, "app")), cla(t, "ns.other", tagged(t, "other")),
		l, routes("https-app", "app"), routes("https-other", "other"))

	get := func(serverName string, root *x509.Certificate) (*http.Response, error) {
		pool := x509.NewCertPool()
		pool.AddCert(root)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: serverName, RootCAs: pool}}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + lis.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	if p.Ready(devgateway.HTTPSPort) {
		t.Fatal("ready without its certificates")
	}
	if _, err := get("app.example", appCert); err == nil {
		t.Fatal("a TLS request succeeded without the listener's certificate")
	}
	if err := p.Handle(resourcev3.SecretType, set(t, tlsSecret("app-cert", appChain, appKey))); err != nil {
		t.Fatal(err)
	}
	if p.Ready(devgateway.HTTPSPort) {
		t.Fatal("ready with one of its two certificates")
	}
	if err := p.Handle(resourcev3.SecretType, set(t, tlsSecret("app-cert", appChain, appKey), tlsSecret("other-cert", otherChain, otherKey))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		serverName string
		root       *x509.Certificate
		upstream   string
	}{
		{"app.example", appCert, "app"},
		{"other.example", otherCert, "other"},
	} {
		resp, err := get(tc.serverName, tc.root)
		if err != nil {
			t.Fatalf("%s: %v", tc.serverName, err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Upstream") != tc.upstream {
			t.Errorf("%s: status %d from %q, want 200 from %s", tc.serverName, resp.StatusCode, resp.Header.Get("X-Upstream"), tc.upstream)
		}
	}
	if _, err := get("unknown.example", appCert); err == nil {
		t.Error("a server name no filter chain matches was served")
	}
}
