package integration_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/pluginapi"
)

// Issue 12, finding 2: a panic on a goroutine a plugin started, or a plugin allocating
// without bound, ends the process, and Go cannot recover either in-process. A
// loader.Worker runs the plugin in a child process: these end only the worker, which
// is started again, and its calls fail closed meanwhile.
func TestABIIsolationWorker(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	so := newABIBuilds(t).build(t, testdataPlugin("isolated"))
	logs := &syncbuf.Buffer{}
	w, err := loader.StartWorker(loader.WorkerOptions{Executable: gatehouse, File: so, Symbol: "Plugin",
		MemoryLimit: 256 << 20, Log: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	call := func(mode string, timeout time.Duration) (*pluginapi.AuthorizationRequest, *pluginapi.AuthorizationResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req := &pluginapi.AuthorizationRequest{Headers: map[string]string{"x-mode": mode, "x-bytes": "caf\xe9"},
			State: map[string]any{"in": "step one"}}
		resp, err := w.Authorize(ctx, req)
		return req, resp, err
	}
	firstPID := ""
	t.Run("answers, with State and raw header bytes across", func(t *testing.T) {
		req, resp, err := call("", 10*time.Second)
		if err != nil || !resp.Allowed {
			t.Fatalf("Authorize = %+v, %v; want allowed", resp, err)
		}
		firstPID = resp.RequestHeaders["x-worker-pid"]
		if got := resp.RequestHeaders["x-bytes-hex"]; got != "636166e9" {
			t.Errorf("the worker saw x-bytes as %s, want 636166e9 (caf\\xe9)", got)
		}
		if req.State["out"] != "from step one" {
			t.Errorf("State after the call = %v, want out: from step one", req.State)
		}
	})
	recovers := func(t *testing.T, after string) {
		t.Helper()
		testbin.Eventually(t, 30*time.Second, func() error {
			_, resp, err := call("", 10*time.Second)
			if err != nil {
				return err
			}
			if pid := resp.RequestHeaders["x-worker-pid"]; pid == firstPID || pid == "" {
				return fmt.Errorf("answered by worker %s, want a new one after %s", pid, after)
			}
			return nil
		})
	}
	t.Run("a panic on the plugin's own goroutine ends only the worker", func(t *testing.T) {
		_, _, err := call("goroutine-panic", 30*time.Second)
		if err == nil || !strings.Contains(err.Error(), "died") {
			t.Fatalf("Authorize = %v, want the worker's death", err)
		}
		recovers(t, "the panic")
		if out := logs.String(); !strings.Contains(out, "isolated plugin worker died") || !strings.Contains(out, "isolated: boom on a goroutine of its own") {
			t.Errorf("the death is not logged with the panic:\n%s", out)
		}
	})
	t.Run("allocating past memoryLimit ends only the worker", func(t *testing.T) {
		_, resp, _ := call("", 10*time.Second)
		firstPID = resp.RequestHeaders["x-worker-pid"]
		_, _, err := call("alloc", 60*time.Second)
		if err == nil || !strings.Contains(err.Error(), "more than its memoryLimit of 268435456 bytes") {
			t.Fatalf("Authorize = %v, want the memory limit", err)
		}
		recovers(t, "the memory limit")
	})
}

// BenchmarkIsolationWorker is the cost of one isolated step call: a request and its
// answer across the unix socket to the worker (gob), the plugin's Authorize included.
// Compare server/chain's BenchmarkChain, the in-process call.
func BenchmarkIsolationWorker(b *testing.B) {
	gatehouse := testbin.Gatehouse(b)
	so := filepath.Join(b.TempDir(), "isolated.so")
	build := exec.Command("go", "build", "-buildmode=plugin", "-o", so, "./integration/testdata/plugins/isolated")
	build.Dir = testbin.Root(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the plugin: %v\n%s", err, out)
	}
	w, err := loader.StartWorker(loader.WorkerOptions{Executable: gatehouse, File: so, Symbol: "Plugin", Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	headers := map[string]string{"accept": "application/json", "user-agent": "bench", "x-required": "alpha", ":path": "/api/v1/items"}
	for _, parallel := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", parallel), func(b *testing.B) {
			run := func() {
				req := &pluginapi.AuthorizationRequest{Headers: headers, State: map[string]any{}}
				if _, err := w.Authorize(context.Background(), req); err != nil {
					b.Error(err)
				}
			}
			b.ReportAllocs()
			if parallel {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						run()
					}
				})
				return
			}
			for b.Loop() {
				run()
			}
		})
	}
}
