package bootstrap_test

import (
	"regexp"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/controlplane/bootstrap"
	"gatehouse.dev/gatehouse/internal/envoysds"
)

func options() bootstrap.Options {
	return bootstrap.Options{XDS: "controlplane.gh.svc:9977", Role: "gh~gw", NodeID: "gw-1", Admin: "127.0.0.1:19000"}
}

// reread is b as Envoy reads it from YAML: it must parse and pass ValidateAll, with the
// typed configs it packs unpacked and valid too.
func reread(t *testing.T, b *bootstrapv3.Bootstrap) *bootstrapv3.Bootstrap {
	t.Helper()
	y, err := bootstrap.YAML(b)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	out := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(j, out); err != nil {
		t.Fatalf("not a bootstrap: %v\n%s", err, y)
	}
	if err := out.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	c := out.GetStaticResources().GetClusters()[0]
	for key, a := range c.GetTypedExtensionProtocolOptions() {
		var o httpv3.HttpProtocolOptions
		if err := a.UnmarshalTo(&o); err != nil || o.ValidateAll() != nil || o.GetExplicitHttpConfig().GetHttp2ProtocolOptions() == nil {
			t.Errorf("%s: %v; want valid HTTP/2 options", key, err)
		}
	}
	return out
}

func TestBuildPlain(t *testing.T) {
	b, err := bootstrap.Build(options())
	if err != nil {
		t.Fatal(err)
	}
	got := reread(t, b)
	c := got.GetStaticResources().GetClusters()[0]
	if c.GetName() != bootstrap.XDSCluster || c.GetTransportSocket() != nil {
		t.Errorf("cluster %s, transport socket %v; want %s in plain text", c.GetName(), c.GetTransportSocket(), bootstrap.XDSCluster)
	}
	if got.GetNode().GetMetadata().GetFields()["role"].GetStringValue() != "gh~gw" || got.GetNode().GetId() != "gw-1" {
		t.Errorf("node %v", got.GetNode())
	}
}

// TestBuildWaitsForFirstConfig: Envoy's listeners stay out until the control plane's
// first configuration has arrived (issue 26). With Envoy's default initial_fetch_timeout
// (15 s) a proxy that starts while the control plane is away opens its listeners with
// nothing behind them; 0, set in the YAML, means no limit.
func TestBuildWaitsForFirstConfig(t *testing.T) {
	b, err := bootstrap.Build(options())
	if err != nil {
		t.Fatal(err)
	}
	dr := reread(t, b).GetDynamicResources()
	for name, cs := range map[string]*corev3.ConfigSource{"lds_config": dr.GetLdsConfig(), "cds_config": dr.GetCdsConfig()} {
		if ift := cs.GetInitialFetchTimeout(); ift == nil || ift.AsDuration() != 0 {
			t.Errorf("%s.initial_fetch_timeout = %v, want 0s (wait without a limit)", name, ift)
		}
	}
	y, err := bootstrap.YAML(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(y), "initial_fetch_timeout: 0s"); n != 2 {
		t.Errorf("the YAML says initial_fetch_timeout: 0s %d times, want 2:\n%s", n, y)
	}
}

// TestBuildMTLS: with a certificate folder, the control plane's cluster speaks TLS 1.3
// with the certificate and CA of the SDS files and accepts only a controlplane SAN.
func TestBuildMTLS(t *testing.T) {
	o := options()
	o.TLSDir, o.SDSDir = "/etc/gatehouse/tls", "/etc/envoy"
	b, err := bootstrap.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := reread(t, b).GetStaticResources().GetClusters()[0].GetTransportSocket()
	if ts.GetName() != "envoy.transport_sockets.tls" {
		t.Fatalf("transport socket %q", ts.GetName())
	}
	var ctx tlsv3.UpstreamTlsContext
	if err := ts.GetTypedConfig().UnmarshalTo(&ctx); err != nil {
		t.Fatal(err)
	}
	if err := ctx.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	common := ctx.GetCommonTlsContext()
	p := common.GetTlsParams()
	if p.GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 || p.GetTlsMaximumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 {
		t.Errorf("tls_params %v; want TLS 1.3 only", p)
	}
	certSrc := common.GetTlsCertificateSdsSecretConfigs()[0].GetSdsConfig().GetPathConfigSource()
	if certSrc.GetPath() != "/etc/envoy/"+envoysds.CertificateFile || certSrc.GetWatchedDirectory().GetPath() != "/etc/envoy" {
		t.Errorf("certificate SDS %v", certSrc)
	}
	cvc := common.GetCombinedValidationContext()
	if got := cvc.GetValidationContextSdsSecretConfig().GetSdsConfig().GetPathConfigSource().GetPath(); got != "/etc/envoy/"+envoysds.ValidationFile {
		t.Errorf("validation SDS path %q", got)
	}
	sans := cvc.GetDefaultValidationContext().GetMatchTypedSubjectAltNames()
	if len(sans) != 1 || sans[0].GetSanType() != tlsv3.SubjectAltNameMatcher_URI {
		t.Fatalf("SAN matchers %v", sans)
	}
	re := regexp.MustCompile(sans[0].GetMatcher().GetSafeRegex().GetRegex())
	if !re.MatchString("spiffe://gatehouse.test/ns/gh/role/controlplane") || re.MatchString("spiffe://gatehouse.test/ns/gh/role/extauth") {
		t.Errorf("SAN regex %s", re)
	}
}

func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*bootstrap.Options)
		err  string
	}{
		{"xds without port", func(o *bootstrap.Options) { o.XDS = "controlplane" }, "xds address"},
		{"admin port 0", func(o *bootstrap.Options) { o.Admin = "127.0.0.1:0" }, "admin address"},
		{"relative certificate folder", func(o *bootstrap.Options) { o.TLSDir, o.SDSDir = "tls", "/etc/envoy" }, "certificate folder: \"tls\" is not an absolute path"},
		{"no SDS folder", func(o *bootstrap.Options) { o.TLSDir = "/etc/gatehouse/tls" }, "SDS folder: is required"},
		{"SDS folder without certificate folder", func(o *bootstrap.Options) { o.SDSDir = "/etc/envoy" }, "certificate folder: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options()
			tc.edit(&o)
			_, err := bootstrap.Build(o)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}
