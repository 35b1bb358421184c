package foundation_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/testbin"
)

var (
	pluginsOnce sync.Once
	pluginDir   string
)

// plugins builds the sample plugin and the test plugins once, into one folder.
func plugins(t *testing.T) string {
	t.Helper()
	pluginsOnce.Do(func() {
		dir := testbin.TempDir(t, "gatehouse-foundation-plugins-")
		testbin.Plugin(t, "./plugins/required_header", dir, "required_header.so")
		testbin.Plugin(t, "./integration/foundation/testdata/plugins/stamp", dir, "stamp.so")
		testbin.Plugin(t, "./integration/foundation/testdata/plugins/faulty", dir, "faulty.so")
		pluginDir = dir
	})
	if pluginDir == "" {
		t.Fatal("plugins failed to build in an earlier test")
	}
	return pluginDir
}

// extauthProc is a running `gatehouse extauth` and a client for it.
type extauthProc struct {
	proc   *testbin.Process
	client authv3.AuthorizationClient
	config string
}

// startExtauth writes config to a file and runs `gatehouse extauth` on it.
func startExtauth(t *testing.T, config string) *extauthProc {
	t.Helper()
	bin := testbin.Gatehouse(t)
	dir := plugins(t)
	cfgPath := filepath.Join(t.TempDir(), "authconfigs.yaml")
	writeFile(t, cfgPath, config)
	addr := testbin.FreeAddr(t)
	p := testbin.Start(t, []string{"LOG_LEVEL=debug"}, bin, "extauth", "--config", cfgPath, "--plugin-dir", dir, "--listen", addr)
	testbin.WaitTCP(t, p, addr, 10*time.Second)
	return &extauthProc{proc: p, client: dial(t, addr), config: cfgPath}
}

// dial returns an ext_authz client for addr, closed when the test ends.
func dial(t *testing.T, addr string) authv3.AuthorizationClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return authv3.NewAuthorizationClient(conn)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check sends a CheckRequest shaped as Envoy sends it.
func (e *extauthProc) check(t *testing.T, configID string, headers map[string]string) *authv3.CheckResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := map[string]string{":method": "GET", ":path": "/", ":authority": "example.test", "user-agent": "test"}
	for k, v := range headers {
		h[k] = v
	}
	req := &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "req-" + t.Name(), Method: "GET", Path: "/", Host: "example.test", Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": configID},
	}}
	resp, err := e.client.Check(ctx, req)
	if err != nil {
		t.Fatalf("Check(%s): %v", configID, err)
	}
	return resp
}
