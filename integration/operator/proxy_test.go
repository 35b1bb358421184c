package operator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestProxyAdmin: the gateway's admin (config_dump in Envoy's shape, /logging, /stats)
// and the `gatehouse proxy` verbs against a live gateway, and served-config with the
// gateway gone.
func TestProxyAdmin(t *testing.T) {
	dir, secrets := checkDir(t)
	admin := testbin.FreeAddr(t)
	s := startSystem(t, dir, "--admin-listen", admin)
	testbin.WaitTCP(t, s.gateway, admin, settle)
	testbin.Eventually(t, settle, func() error {
		code, body, err := httpDo(http.MethodGet, "http://"+admin+"/ready", "")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("/ready = %d %s", code, body)
		}
		return err
	})
	// The admin records each xDS update just after the gateway applied it, so /ready can
	// answer before the last type (the routes) shows in /config_dump.
	testbin.Eventually(t, settle, func() error {
		_, body, err := httpDo(http.MethodPost, "http://"+admin+"/config_dump", "")
		if err == nil && !strings.Contains(body, `"dynamic_route_configs"`) {
			err = fmt.Errorf("/config_dump has no route configuration yet")
		}
		return err
	})

	t.Run("config_dump", func(t *testing.T) {
		for _, tt := range []struct {
			method, path string
			types        []string
		}{
			{http.MethodPost, "/config_dump", []string{"ClustersConfigDump", "ListenersConfigDump", "RoutesConfigDump", "SecretsConfigDump"}},
			{http.MethodGet, "/config_dump?include_eds", []string{"ClustersConfigDump", "ListenersConfigDump", "RoutesConfigDump", "SecretsConfigDump", "EndpointsConfigDump"}},
		} {
			code, body, err := httpDo(tt.method, "http://"+admin+tt.path, "")
			if err != nil || code != http.StatusOK {
				t.Fatalf("%s %s = %d %v", tt.method, tt.path, code, err)
			}
			var dump struct {
				Configs []map[string]json.RawMessage `json:"configs"`
			}
			if err := json.Unmarshal([]byte(body), &dump); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range dump.Configs {
				var typ string
				_ = json.Unmarshal(c["@type"], &typ)
				got = append(got, strings.TrimPrefix(typ, "type.googleapis.com/envoy.admin.v3."))
			}
			if strings.Join(got, ",") != strings.Join(tt.types, ",") {
				t.Errorf("%s %s: configs %v, want %v", tt.method, tt.path, got, tt.types)
			}
			for _, want := range []string{`"dynamic_active_clusters"`, `"name": "gatehouse-system.echo"`, `"dynamic_listeners"`, `"dynamic_route_configs"`} {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s lacks %s", tt.method, tt.path, want)
				}
			}
			assertNoSecret(t, tt.path, body, secrets)
		}
	})

	t.Run("logging", func(t *testing.T) {
		for _, tt := range []struct {
			method, query string
			code          int
			want          string
		}{
			{http.MethodGet, "", 200, "  router: info\n"},
			{http.MethodPost, "?level=debug", 200, "  ext_authz: debug\n"},
			{http.MethodGet, "", 200, "  router: debug\n"},
			{http.MethodPost, "?router=warning", 200, "  router: warn\n"},
			{http.MethodPost, "?level=loud", 400, `unknown level "loud"`},
			{http.MethodPost, "?nope=info", 400, `unknown logger "nope"`},
			{http.MethodPost, "?level=info", 200, "  admin: info\n"},
		} {
			code, body, err := httpDo(tt.method, "http://"+admin+"/logging"+tt.query, "")
			if err != nil || code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%s /logging%s = %d %q (%v), want %d with %q", tt.method, tt.query, code, body, err, tt.code, tt.want)
			}
		}
	})

	t.Run("proxy verbs", func(t *testing.T) {
		pa := []string{"--proxy-admin", admin}
		if code, out, errOut := cli(t, "", append([]string{"proxy", "address"}, pa...)...); code != 0 || out != s.gatewayListen+"\n" {
			t.Errorf("proxy address: exit %d %q %s, want %s", code, out, errOut, s.gatewayListen)
		}
		if code, out, _ := cli(t, "", append([]string{"proxy", "url"}, pa...)...); code != 0 || out != "http://"+s.gatewayListen+"\n" {
			t.Errorf("proxy url: exit %d %q", code, out)
		}
		if code, out, _ := cli(t, "", append([]string{"proxy", "stats"}, pa...)...); code != 0 || !strings.Contains(out, "cluster_manager.cds.update_success: ") || !strings.Contains(out, "server.live: 1") {
			t.Errorf("proxy stats: exit %d\n%s", code, out)
		}
		code, out, _ := cli(t, "", append([]string{"proxy", "dump", "--include-eds"}, pa...)...)
		if code != 0 || !strings.Contains(out, "EndpointsConfigDump") {
			t.Errorf("proxy dump --include-eds: exit %d\n%.400s", code, out)
		}
		assertNoSecret(t, "proxy dump", out, secrets)
		if code, out, _ := cli(t, "", append([]string{"proxy", "logs"}, pa...)...); code != 0 || !strings.Contains(out, `"message":"proxy admin serving"`) {
			t.Errorf("proxy logs: exit %d\n%.400s", code, out)
		}
	})

	t.Run("proxy logs -f switches to debug and follows", func(t *testing.T) {
		f := testbin.Start(t, nil, testbin.Gatehouse(t), "proxy", "logs", "-f", "--proxy-admin", admin)
		testbin.Eventually(t, settle, func() error {
			if _, body, _ := httpDo(http.MethodGet, "http://"+admin+"/logging", ""); !strings.Contains(body, "router: debug") {
				return fmt.Errorf("proxy log level not debug yet: %s", body)
			}
			return nil
		})
		mark := len(f.Output())
		writeFile(t, dir, "upstreams.yaml", strings.Replace(upstreamsYAML, "8090}, {addr: 127.0.0.2", "8093}, {addr: 127.0.0.2", 1))
		testbin.Eventually(t, settle, func() error {
			if !strings.Contains(f.Output()[mark:], `"level":"debug"`) {
				return fmt.Errorf("no debug line of the gateway followed after the edit")
			}
			return nil
		})
	})

	t.Run("served-config works with the proxy down", func(t *testing.T) {
		s.gateway.Kill()
		code, out, errOut := cli(t, "", "proxy", "served-config", "--admin", s.admin)
		if code != 0 {
			t.Fatalf("proxy served-config: exit %d %s", code, errOut)
		}
		for _, want := range []string{"type.googleapis.com/envoy.config.listener.v3.Listener:", "gatehouse-system.echo:", "version: "} {
			if !strings.Contains(out, want) {
				t.Errorf("served-config lacks %q:\n%.600s", want, out)
			}
		}
		assertNoSecret(t, "served-config", out, secrets)
	})
}

// TestEnvoyBootstrap: the printed bootstrap parses as Envoy's Bootstrap and passes its
// validation, with ADS to the control plane, the role and the admin address.
func TestEnvoyBootstrap(t *testing.T) {
	code, out, errOut := cli(t, "", "envoy", "bootstrap", "--xds", "controlplane.gatehouse-system:9977", "--role", "apps~edge")
	if code != 0 {
		t.Fatalf("envoy bootstrap: exit %d %s", code, errOut)
	}
	j, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(j, &b); err != nil {
		t.Fatalf("not a Bootstrap: %v\n%s", err, out)
	}
	if err := b.ValidateAll(); err != nil {
		t.Errorf("ValidateAll: %v", err)
	}
	if got := b.GetNode().GetMetadata().GetFields()["role"].GetStringValue(); got != "apps~edge" {
		t.Errorf("node metadata role = %q", got)
	}
	if got := b.GetAdmin().GetAddress().GetSocketAddress().GetPortValue(); got != 19000 {
		t.Errorf("admin port = %d, want 19000", got)
	}
	if b.GetDynamicResources().GetAdsConfig().GetApiType().String() != "DELTA_GRPC" || b.GetDynamicResources().GetLdsConfig().GetAds() == nil {
		t.Errorf("dynamic resources are not on ADS: %v", b.GetDynamicResources())
	}
	if code, _, errOut := cli(t, "", "envoy", "bootstrap", "--role", "nope"); code != 2 || !strings.Contains(errOut, "--role") {
		t.Errorf("envoy bootstrap --role nope: exit %d %s", code, errOut)
	}
}
