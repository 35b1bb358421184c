package proxyadmin_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"gatehouse.dev/gatehouse/devgateway/proxyadmin"
)

func pack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func dump(t *testing.T, rec *proxyadmin.Recorder) string {
	t.Helper()
	srv := httptest.NewServer(proxyadmin.Handler(proxyadmin.Options{Recorder: rec, Logs: proxyadmin.NewLogBuffer()}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/config_dump", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestConfigDumpRedactsPrivateKeys: an SDS secret's private key never leaves the
// admin; its certificate does.
func TestConfigDumpRedactsPrivateKeys(t *testing.T) {
	rec := proxyadmin.NewRecorder(zerolog.Nop())
	ok := func(string, map[string]*anypb.Any) error { return nil }
	sec := &tlsv3.Secret{Name: "tls", Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "PUBLIC-CERT"}},
		PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "PRIVATE-KEY-VALUE"}},
	}}}
	if err := rec.Wrap(ok)(resourcev3.SecretType, map[string]*anypb.Any{"tls": pack(t, sec)}); err != nil {
		t.Fatal(err)
	}
	out := dump(t, rec)
	if strings.Contains(out, "PRIVATE-KEY-VALUE") || !strings.Contains(out, `"private_key": {`) || !strings.Contains(out, "<redacted>") {
		t.Errorf("config_dump does not redact the private key:\n%s", out)
	}
	if !strings.Contains(out, "PUBLIC-CERT") {
		t.Errorf("config_dump hides the certificate too:\n%s", out)
	}
}

// TestConfigDumpKeepsWhatServes: a refused update keeps the previous version active,
// with the failure in error_state, as the gateway does.
func TestConfigDumpKeepsWhatServes(t *testing.T) {
	rec := proxyadmin.NewRecorder(zerolog.Nop())
	cluster := func(seconds int64) map[string]*anypb.Any {
		return map[string]*anypb.Any{"a.b": pack(t, &clusterv3.Cluster{Name: "a.b", ConnectTimeout: durationpb.New(time.Duration(seconds) * time.Second)})}
	}
	handle := rec.Wrap(func(_ string, res map[string]*anypb.Any) error {
		var c clusterv3.Cluster
		if err := res["a.b"].UnmarshalTo(&c); err != nil {
			return err
		}
		if c.GetConnectTimeout().GetSeconds() > 5 {
			return errors.New("cluster a.b: connect_timeout: too long")
		}
		return nil
	})
	if err := handle(resourcev3.ClusterType, cluster(2)); err != nil {
		t.Fatal(err)
	}
	if err := handle(resourcev3.ClusterType, cluster(9)); err == nil {
		t.Fatal("the refusing handler's error was lost")
	}
	out := dump(t, rec)
	for _, want := range []string{`"connect_timeout": "2s"`, `"error_state": {`, `"details": "cluster a.b: connect_timeout: too long"`, `"connect_timeout": "9s"`} {
		if !strings.Contains(out, want) {
			t.Errorf("config_dump lacks %s:\n%s", want, out)
		}
	}
	stats := rec.Stats(true)
	for _, want := range []string{"cluster_manager.cds.update_attempt: 2", "cluster_manager.cds.update_success: 1", "cluster_manager.cds.update_rejected: 1", "cluster_manager.cds.resources: 1"} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats lack %q:\n%s", want, stats)
		}
	}
}

// TestServesRuntimeProfiles: the gateway's admin serves Go's profiles as the other
// admins do, so a slow config apply can be profiled where it happens.
func TestServesRuntimeProfiles(t *testing.T) {
	srv := httptest.NewServer(proxyadmin.Handler(proxyadmin.Options{Recorder: proxyadmin.NewRecorder(zerolog.Nop()), Logs: proxyadmin.NewLogBuffer()}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "goroutine profile:") {
		t.Errorf("GET /debug/pprof/goroutine: %d\n%s", resp.StatusCode, b)
	}
}

// TestConfigDumpShowsVHDSVirtualHosts: a route configuration with vhds is shown with the
// virtual hosts of its namespace, as Envoy's config dump shows it; another route
// configuration's are not among them.
func TestConfigDumpShowsVHDSVirtualHosts(t *testing.T) {
	rec := proxyadmin.NewRecorder(zerolog.Nop())
	ok := func(string, map[string]*anypb.Any) error { return nil }
	rc := &routev3.RouteConfiguration{Name: "http", Vhds: &routev3.Vhds{ConfigSource: &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}}}
	vh := func(name, domain string) *anypb.Any {
		return pack(t, &routev3.VirtualHost{Name: name, Domains: []string{domain}})
	}
	if err := rec.Wrap(ok)(resourcev3.RouteType, map[string]*anypb.Any{"http": pack(t, rc)}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wrap(ok)(resourcev3.VirtualHostType, map[string]*anypb.Any{
		"http/apps.web": vh("apps.web", "web.example.com"), "other/apps.api": vh("apps.api", "api.example.com"),
	}); err != nil {
		t.Fatal(err)
	}
	out := dump(t, rec)
	if !strings.Contains(out, `"web.example.com"`) || strings.Contains(out, `"api.example.com"`) {
		t.Errorf("config_dump: want route configuration http with virtual host apps.web only:\n%s", out)
	}
}
