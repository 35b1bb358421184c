package helm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// extauthPod is the gatehouse binary running as the rendered extauth container.
type extauthPod struct {
	proc        *testbin.Process
	grpc, admin string // admin is empty without --admin-listen
	conn        *grpc.ClientConn
}

// startExtauth runs bin with the args and env of r's extauth container. The args that
// name the auth-plugins and config mounts get pluginDir and configDir; --listen and
// --admin-listen get free 127.0.0.1 ports, after checking they name the container's
// grpc and http-admin ports. Anything else is passed as rendered.
func startExtauth(t *testing.T, bin string, r *rendered, pluginDir, configDir string) *extauthPod {
	t.Helper()
	spec := r.deployment.Spec.Template.Spec
	if len(spec.Containers) != 1 || spec.Containers[0].Name != "extauth" {
		t.Fatalf("want one container named extauth, got %d", len(spec.Containers))
	}
	c := spec.Containers[0]
	dirs := map[string]string{}
	for _, m := range c.VolumeMounts {
		switch m.Name {
		case "auth-plugins":
			dirs[m.MountPath] = pluginDir
		case "config":
			dirs[m.MountPath] = configDir
		case "tmp": // the binary's own temp dir stands in
		default:
			t.Fatalf("volume mount %q: the test does not know what it holds", m.Name)
		}
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if c.ReadinessProbe.GRPC == nil || c.ReadinessProbe.GRPC.Port != ports["grpc"] {
		t.Errorf("readiness probe %+v does not ask the grpc port %d", c.ReadinessProbe.ProbeHandler, ports["grpc"])
	}
	pod := &extauthPod{}
	listen := map[string]struct {
		port string
		addr *string
	}{"--listen": {"grpc", &pod.grpc}, "--admin-listen": {"http-admin", &pod.admin}}
	args := append([]string(nil), c.Args...)
	for i := 0; i < len(args); i++ {
		if l, ok := listen[args[i]]; ok && i+1 < len(args) {
			i++
			if want := ":" + strconv.Itoa(int(ports[l.port])); args[i] != want {
				t.Errorf("%s %s, want %s: the container's %s port", args[i-1], args[i], want, l.port)
			}
			*l.addr = testbin.FreeAddr(t)
			args[i] = *l.addr
		} else if dir, ok := dirs[args[i]]; ok {
			args[i] = dir
		}
	}
	if pod.grpc == "" {
		t.Fatalf("args %q have no --listen", c.Args)
	}
	// The pod's environment is only what the chart sets: clear what the test's may hold.
	env := []string{"LOG_LEVEL=", "START_STATS_SERVER=", "GATEHOUSE_PLUGIN_DIR="}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s: valueFrom is not supported by this test", e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
	}
	t.Logf("gatehouse %q with env %q", args, env)
	pod.proc = testbin.Start(t, env, bin, args...)
	return pod
}

// waitReady waits for what the kubelet waits for: the gRPC health check the readiness
// probe sends, and the admin port when there is one.
func (p *extauthPod) waitReady(t *testing.T) {
	t.Helper()
	testbin.WaitTCP(t, p.proc, p.grpc, time.Minute)
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p.conn = conn
	// Ready (SERVING) once its first config is built, as the readiness probe waits for.
	testbin.Eventually(t, time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("gRPC health check: %v, %v; the readiness probe would fail", resp.GetStatus(), err)
		}
		return nil
	})
	if p.admin != "" {
		testbin.WaitTCP(t, p.proc, p.admin, time.Minute)
	}
}

// check sends Envoy's CheckRequest for config_id id and returns the verdict's code.
func (p *extauthPod) check(t *testing.T, id string, headers map[string]string) code.Code {
	t.Helper()
	h := map[string]string{":method": "GET", ":path": "/", ":authority": "example.test"}
	for k, v := range headers {
		h[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := authv3.NewAuthorizationClient(p.conn).Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "example.test", Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": id},
	}})
	if err != nil {
		t.Fatalf("Check(%s): %v", id, err)
	}
	return code.Code(resp.GetStatus().GetCode())
}

// statuses is GET /auth-configs as id: state.
func (p *extauthPod) statuses() (map[string]string, error) {
	var list []struct{ ID, State, Reason string }
	if err := getJSON("http://"+p.admin+"/auth-configs", &list); err != nil {
		return nil, err
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = s.State
	}
	return got, nil
}

// logLevel is the level GET /logging reports.
func (p *extauthPod) logLevel(t *testing.T) string {
	t.Helper()
	var body struct{ Level string }
	if err := getJSON("http://"+p.admin+"/logging", &body); err != nil {
		t.Fatal(err)
	}
	return body.Level
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// mountConfigMap lays data out as the kubelet mounts a ConfigMap: the files in a
// timestamped hidden folder, a ..data symlink to it, and a symlink per key.
func mountConfigMap(t *testing.T, data map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	const ts = "..2026_01_02_03_04_05.000000001"
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for key, content := range data {
		if err := os.WriteFile(filepath.Join(dir, ts, key), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", key), filepath.Join(dir, key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// diffErr is a cmp diff as an error, nil when there is none.
func diffErr(what, diff string) error {
	if diff == "" {
		return nil
	}
	return errors.New(what + ":\n" + diff)
}
