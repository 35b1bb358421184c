package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// published records what a Pipeline publishes, per role.
type published struct {
	mu    sync.Mutex
	roles map[string]xds.Resources
	calls int
}

func (p *published) publish(role string, r xds.Resources) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.roles == nil {
		p.roles = map[string]xds.Resources{}
	}
	p.roles[role] = r
	p.calls++
	return nil
}

func (p *published) get(role, typeURL string) map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]bool{}
	for name := range p.roles[role][typeURL] {
		out[name] = true
	}
	return out
}

// await polls until ok holds, failing after a generous deadline.
func await(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDirectoryToRoles runs the pipeline on a watched directory: the first publish
// holds every role's complete resources, and an edit on disk reaches the roles.
func TestDirectoryToRoles(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "basic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "basic.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var pub published
	var settings []translate.Settings
	var smu sync.Mutex
	log := zerolog.New(zerolog.NewTestWriter(t))
	p := pipeline.New(pipeline.Options{Log: log, Publish: pub.publish, OnSettings: func(s translate.Settings) {
		smu.Lock()
		settings = append(settings, s)
		smu.Unlock()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Run(ctx, &source.Dir{Path: dir, Log: log, Debounce: 20 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	await(t, "the extauth config", func() bool { return pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)["gatehouse-system.plugin-auth"] })
	clusters := pub.get(xds.DefaultProxyRole, xds.ClusterType)
	for _, c := range []string{"gatehouse-system.extauth", "gatehouse-system.echo", "apps.web"} {
		if !clusters[c] {
			t.Errorf("cluster %s not published; got %v", c, clusters)
		}
	}
	if !pub.get(xds.DefaultProxyRole, xds.ListenerType)["http"] || !pub.get(xds.DefaultProxyRole, xds.RouteType)["http"] {
		t.Error("listener or route configuration http not published")
	}

	more := `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: second, namespace: gatehouse-system}
spec:
  configs: [{pluginAuth: {name: required_header, exportedSymbolName: Plugin}}]
---
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 1s}
`
	if err := os.WriteFile(filepath.Join(dir, "more.yaml"), []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, "the second config", func() bool { return pub.get(xds.RoleExtauth, xds.ExtAuthConfigType)["gatehouse-system.second"] })
	// The run tells OnSettings once it has published, so the second call may come just after.
	await(t, "the second settings", func() bool { smu.Lock(); defer smu.Unlock(); return len(settings) >= 2 })
	smu.Lock()
	defer smu.Unlock()
	if n := len(settings); n != 2 || settings[0].RequestTimeout != translate.DefaultRequestTimeout || settings[1].RequestTimeout != time.Second {
		t.Errorf("settings seen: %+v, want the defaults then requestTimeout 1s", settings)
	}
}
