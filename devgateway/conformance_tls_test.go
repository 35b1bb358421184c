package devgateway_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
)

// tlsFixture is two VirtualServices with sslConfig on two names and one on plain HTTP,
// their TLS Secrets holding certificates made per run.
func tlsFixture(echoPort string, certs map[string][2][]byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: echo, namespace: conf}\nspec:\n  static: {hosts: [{addr: 127.0.0.1, port: %s}]}\n", echoPort)
	for _, n := range []string{"app", "other"} {
		fmt.Fprintf(&b, "---\napiVersion: gateway.gatehouse.dev/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: conf}\nspec:\n  sslConfig: {secretRef: {name: %s-tls}}\n  virtualHost:\n    domains: [%s.example]\n    routes: [{routeAction: {single: {upstream: {name: echo}}}}]\n", n, n, n)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s-tls, namespace: conf}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n",
			n, base64.StdEncoding.EncodeToString(certs[n][0]), base64.StdEncoding.EncodeToString(certs[n][1]))
	}
	return b.String()
}

type tlsRun struct {
	pl        *pipeline.Pipeline
	published map[string]xds.Resources
}

func newTLSRun() *tlsRun {
	r := &tlsRun{published: map[string]xds.Resources{}}
	r.pl = pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: func(role string, res xds.Resources) error {
		r.published[role] = res
		return nil
	}})
	return r
}

func (r *tlsRun) apply(t *testing.T, yaml string) xds.Resources {
	t.Helper()
	res, probs := source.Decode([]byte(yaml), "tls.yaml")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	r.pl.Apply(source.NewInput("test", res, nil))
	for _, e := range r.pl.Stages().Edge.Resources.All() {
		if st := e.Statuses[0]; st.State != validate.Accepted {
			t.Fatalf("%s: %s %v", e.Key(), st.State, st.Reasons)
		}
	}
	out := r.published[xds.DefaultProxyRole]
	if err := pipelinetest.Valid(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// chainCert is what the emitted HTTPS listener serves a server name with: the filter
// chain SNI selects, its SDS secret, that secret's certificate.
func chainCert(t *testing.T, res xds.Resources, sni string) *x509.Certificate {
	t.Helper()
	l := res[xds.ListenerType]["https"].(*listenerv3.Listener)
	for _, fc := range l.GetFilterChains() {
		for _, n := range fc.GetFilterChainMatch().GetServerNames() {
			if n != sni {
				continue
			}
			var d tlsv3.DownstreamTlsContext
			if err := fc.GetTransportSocket().GetTypedConfig().UnmarshalTo(&d); err != nil {
				t.Fatal(err)
			}
			name := d.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName()
			s := res[xds.SecretType][name].(*tlsv3.Secret)
			pair, err := tls.X509KeyPair(s.GetTlsCertificate().GetCertificateChain().GetInlineBytes(), s.GetTlsCertificate().GetPrivateKey().GetInlineBytes())
			if err != nil {
				t.Fatal(err)
			}
			c, _ := x509.ParseCertificate(pair.Certificate[0])
			return c
		}
	}
	return nil
}

// TestTLSConformance: the same server names against the emitted HTTPS listener (which
// chain, which SDS certificate) and through the gateway serving it (which certificate
// the handshake presents); then the certificate is rotated and new handshakes use the
// new one, with no restart.
func TestTLSConformance(t *testing.T) {
	echo := echoUpstream(t, nil)
	_, echoPort, _ := net.SplitHostPort(echo)
	certs := map[string][2][]byte{}
	leaf := map[string]*x509.Certificate{}
	for _, n := range []string{"app", "other"} {
		c, chain, key := selfSigned(t, n+".example")
		certs[n], leaf[n] = [2][]byte{chain, key}, c
	}
	run := newTLSRun()
	res := run.apply(t, tlsFixture(echoPort, certs))
	if _, ok := res[xds.ListenerType]["https"]; !ok {
		t.Fatal("no https listener")
	}

	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, devgateway.HTTPSPort, lis) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })
	feedAll := func(res xds.Resources) {
		for _, typ := range devgateway.Types {
			set := map[string]*anypb.Any{}
			for n, r := range res[typ] {
				set[n] = mustAny(t, r.(types.Resource))
			}
			if err := p.Handle(typ, set); err != nil {
				t.Fatalf("Handle(%s): %v", typ, err)
			}
		}
	}
	feedAll(res)
	eventually(t, "the https listener served", func() bool { return p.Ready(devgateway.HTTPSPort) })
	handshake := func(sni string) (*x509.Certificate, *http.Response) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: sni, InsecureSkipVerify: true}}}
		defer c.CloseIdleConnections()
		req, _ := http.NewRequest("GET", "https://"+lis.Addr().String()+"/x", nil)
		req.Host = sni
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", sni, err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0], resp
	}
	for _, n := range []string{"app", "other"} {
		sni := n + ".example"
		t.Run("translation/"+sni, func(t *testing.T) {
			if got := chainCert(t, res, sni); got == nil || !got.Equal(leaf[n]) {
				t.Errorf("the filter chain for %s does not serve its certificate", sni)
			}
		})
		t.Run("gateway/"+sni, func(t *testing.T) {
			got, resp := handshake(sni)
			if !got.Equal(leaf[n]) || resp.StatusCode != http.StatusOK {
				t.Errorf("%s: served %v (status %d), want its own certificate", sni, got.DNSNames, resp.StatusCode)
			}
		})
	}

	t.Run("rotation", func(t *testing.T) {
		c, chain, key := selfSigned(t, "app.example")
		certs["app"] = [2][]byte{chain, key}
		res := run.apply(t, tlsFixture(echoPort, certs))
		if got := chainCert(t, res, "app.example"); !got.Equal(c) {
			t.Fatal("translation: the rotated certificate is not the one served for app.example")
		}
		feedAll(res)
		if got, _ := handshake("app.example"); !got.Equal(c) {
			t.Errorf("gateway: a new handshake got the old certificate")
		}
		if got, _ := handshake("other.example"); !got.Equal(leaf["other"]) {
			t.Errorf("gateway: other.example changed certificate")
		}
	})
}
