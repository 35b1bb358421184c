package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/server"
)

// TestSwap replaces plugin files in the watched directory of a running `gatehouse
// extauth` while 16 clients send Checks without pause, and counts every Check: none
// may fail while the new plugin is checked, loaded and swapped in.
func TestSwap(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	b := newABIBuilds(t)
	v1, v2 := t.TempDir(), t.TempDir()
	var first, second, good string
	t.Run("build", func(t *testing.T) {
		for out, version := range map[string]string{v1: "v1", v2: "v2"} {
			t.Run("versioned "+version, func(t *testing.T) { t.Parallel(); versionedBuild(t, gatehouse, b.root, version, out) })
		}
		t.Run("samepath", func(t *testing.T) { t.Parallel(); first, second = samePathBuilds(t, b) })
		t.Run("required_header", func(t *testing.T) { t.Parallel(); good = b.build(t, requiredHeader) })
	})
	if t.Failed() {
		t.FailNow()
	}
	v1, v2 = filepath.Join(v1, "versioned.so"), filepath.Join(v2, "versioned.so")
	versioned := srvSettings + srvAuthConfig("versioned", "versioned", "versioned.so", "Plugin", "{}")

	t.Run("a new build renamed over the file serves without a failed Check", func(t *testing.T) {
		dir := t.TempDir()
		srvInstall(t, v1, dir, "versioned.so")
		s := startSrv(t, gatehouse, dir, versioned)
		swapUnderLoad(t, s, "v1", "v2", func() time.Time { return srvInstall(t, v2, dir, "versioned.so") })
	})

	t.Run("a file written in place in two halves serves without a failed Check", func(t *testing.T) {
		dir := t.TempDir()
		srvInstall(t, v1, dir, "versioned.so")
		s := startSrv(t, gatehouse, dir, versioned)
		swapUnderLoad(t, s, "v1", "v2", func() time.Time {
			// A slow copy: the first half, a pause longer than the watcher's settle
			// time, then the rest. The half-written file must be refused (truncated)
			// while v1 keeps serving, and the complete one served.
			data, err := os.ReadFile(v2)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(dir, "versioned.so"), os.O_WRONLY|os.O_TRUNC, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * loader.WatchSettle)
			if _, err := f.Write(data[len(data)/2:]); err != nil {
				t.Fatal(err)
			}
			return time.Now()
		})
		if !strings.Contains(s.proc.Output(), "truncated") {
			t.Errorf("the half-written file was not seen and refused as truncated; the test did not exercise what it means to")
		}
	})

	t.Run("a Kubernetes-style ..data symlink swap serves without a failed Check", func(t *testing.T) {
		dir := t.TempDir()
		k8sPublish(t, dir, "..2025_06_01_10_00_00.000000001", v1)
		if err := os.Symlink(filepath.Join("..data", "versioned.so"), filepath.Join(dir, "versioned.so")); err != nil {
			t.Fatal(err)
		}
		s := startSrv(t, gatehouse, dir, versioned)
		swapUnderLoad(t, s, "v1", "v2", func() time.Time {
			old, at := k8sPublish(t, dir, "..2025_06_01_10_05_00.000000002", v2)
			// The kubelet removes the old timestamped folder after the swap.
			if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
				t.Fatal(err)
			}
			return at
		})
	})

	t.Run("a rebuild with the same plugin path is refused and the old version serves without a failed Check", func(t *testing.T) {
		dir := t.TempDir()
		srvInstall(t, first, dir, "samepath.so")
		s := startSrv(t, gatehouse, dir, srvSettings+srvAuthConfig("samepath", "samepath", "samepath.so", "Plugin", "{}"))
		load := startLoad(s, "default.samepath", "x-greeting", "first", "second")
		load.waitFor(t, "first")
		srvInstall(t, second, dir, "samepath.so")
		var st server.Status
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if st = s.statuses(t)["default.samepath"]; st.State == server.StateRejected {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Second) // keep the load on the old version a little longer
		load.stop()
		t.Logf("%d Checks, none failed, slowest %v; default.samepath: %s", load.total.Load(),
			time.Duration(load.slowest.Load()).Round(time.Millisecond), st.Reason)
		load.assertNoFailures(t)
		if n := load.count("second"); n != 0 {
			t.Errorf("%d Checks answered by the refused build", n)
		}
		want := []string{
			`plugin path: another build with plugin path "example.com/samepath" is already loaded (from ` + filepath.Join(dir, "samepath.so") + ", sha256 " + sha(t, first)[:12] + "); a process cannot load two plugins with the same plugin path, so the loaded version keeps serving",
			"fix: restart required (or rebuild with `gatehouse plugin build`, which gives each build a unique plugin path)",
		}
		if st.State != server.StateRejected || !st.ServingPrevious || missing(st.Reason, want) != "" {
			t.Fatalf("default.samepath: %+v\nwant Rejected, serving the previous version, with %q", st, missing(st.Reason, want))
		}
		if v := s.metric(t, "gatehouse_extauth_auth_config_status", map[string]string{"config_id": "default.samepath", "state": "Rejected", "serving_previous": "true"}); v != 1 {
			t.Errorf("status metric Rejected, serving_previous = %v, want 1", v)
		}
		if r := s.status(t); r.code != 1 || !strings.Contains(r.stdout, "default.samepath  Rejected  previous version  spec.configs[0].pluginAuth (samepath): loader: ") {
			t.Errorf("gatehouse extauth status: exit %d\n%s\nwant exit 1 and default.samepath Rejected, serving the previous version", r.code, r.stdout)
		}
		logged := false
		for _, l := range s.logs("error", "auth config rejected") {
			logged = logged || l.str("config_id") == "default.samepath" && l.str("error") == st.Reason && l["serving_previous"] == true
		}
		if !logged {
			t.Errorf("no ERROR log line saying default.samepath is rejected and its previous version serves")
		}
	})

	t.Run("a removed plugin file is reported and its chain keeps serving", func(t *testing.T) {
		dir := t.TempDir()
		srvInstall(t, good, dir, "required_header.so")
		s := startSrv(t, gatehouse, dir, srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep))
		if err := os.Remove(filepath.Join(dir, "required_header.so")); err != nil {
			t.Fatal(err)
		}
		testbin.Eventually(t, 10*time.Second, func() error {
			for _, l := range s.logs("warn", "plugin file removed; chains already using it keep serving the loaded copy until restart") {
				if l.str("file") == filepath.Join(dir, "required_header.so") {
					return nil
				}
			}
			return fmt.Errorf("no WARN log line for the removed file")
		})
		if got := s.verdict(t, "default.good", map[string]string{"x-required": "alpha"}); !cmp.Equal(got, srvMatched) {
			t.Errorf("default.good after its file was removed: %v, want allowed", got)
		}
		if st := s.statuses(t)["default.good"]; st.State != server.StateAccepted {
			t.Errorf("default.good after its file was removed: %+v, want Accepted", st)
		}
	})
}

// swapUnderLoad runs the load on default.versioned, calls swap (which returns when the
// new file is in place) once oldV is served, and checks that every Check succeeded and
// that newV, once seen by a client, was all it saw after.
func swapUnderLoad(t *testing.T, s *srvProc, oldV, newV string, swap func() time.Time) {
	t.Helper()
	load := startLoad(s, "default.versioned", "x-version", oldV, newV)
	load.waitFor(t, oldV)
	swapped := swap()
	select {
	case <-load.newSeen:
		time.Sleep(time.Second) // keep the load on the new version a little longer
	case <-time.After(20 * time.Second):
	}
	load.stop()
	load.assertNoFailures(t)
	at := load.firstNew.Load()
	if at == nil {
		t.Fatalf("%s never served within 20s of the swap (%d Checks answered by %s)", newV, load.count(oldV), oldV)
	}
	t.Logf("%d Checks (%d by %s, %d by %s), none failed, slowest %v; first %s response %v after the swap",
		load.total.Load(), load.count(oldV), oldV, load.count(newV), newV, time.Duration(load.slowest.Load()).Round(time.Millisecond),
		newV, at.Sub(swapped).Round(time.Millisecond))
	if n := load.regressions.Load(); n != 0 {
		t.Errorf("%d Checks answered by %s after the same client had seen %s", n, oldV, newV)
	}
	if st := s.statuses(t)["default.versioned"]; st.State != server.StateAccepted {
		t.Errorf("default.versioned after the swap: %+v, want Accepted", st)
	}
}

// srvLoad is 16 clients sending Checks for one config_id back to back, recording the
// value of one response header.
type srvLoad struct {
	header, oldV, newV string
	done               chan struct{}
	wg                 sync.WaitGroup

	total, regressions atomic.Int64
	slowest            atomic.Int64 // nanoseconds
	firstNew           atomic.Pointer[time.Time]
	newSeen            chan struct{}
	newOnce            sync.Once

	mu       sync.Mutex
	values   map[string]int
	failures []string
	failed   int
}

const srvClients = 16

func startLoad(s *srvProc, id, header, oldV, newV string) *srvLoad {
	l := &srvLoad{header: header, oldV: oldV, newV: newV, done: make(chan struct{}), newSeen: make(chan struct{}), values: map[string]int{}}
	for range srvClients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			sawNew := false
			for {
				select {
				case <-l.done:
					return
				default:
				}
				start := time.Now()
				resp, err := s.check(context.Background(), id, nil)
				now := time.Now()
				l.total.Add(1)
				for d := int64(now.Sub(start)); ; {
					if old := l.slowest.Load(); d <= old || l.slowest.CompareAndSwap(old, d) {
						break
					}
				}
				v := srvVerdict{}
				if err == nil {
					v = srvVerdictOf(resp)
				}
				value, ok := v.Headers[header]
				switch {
				case err != nil:
					l.fail(fmt.Sprintf("Check: %v", err))
					continue
				case v.RPC != 0 || !ok:
					l.fail(fmt.Sprintf("Check: %v", v))
					continue
				case value == newV:
					sawNew = true
					l.newOnce.Do(func() { l.firstNew.Store(&now); close(l.newSeen) })
				case value == oldV && sawNew:
					l.regressions.Add(1)
				}
				l.mu.Lock()
				l.values[value]++
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func (l *srvLoad) fail(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed++
	if len(l.failures) < 5 {
		l.failures = append(l.failures, msg)
	}
}

func (l *srvLoad) count(value string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.values[value]
}

// waitFor waits until every client can have been answered with value a few times.
func (l *srvLoad) waitFor(t *testing.T, value string) {
	t.Helper()
	testbin.Eventually(t, 20*time.Second, func() error {
		if n := l.count(value); n < 10*srvClients {
			return fmt.Errorf("%d Checks answered by %s (%d failed)", n, value, l.failedCount())
		}
		return nil
	})
}

func (l *srvLoad) failedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// stop ends the load and waits for the Checks under way.
func (l *srvLoad) stop() {
	close(l.done)
	l.wg.Wait()
}

func (l *srvLoad) assertNoFailures(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total.Load() == 0 || l.failed != 0 {
		t.Errorf("%d of %d Checks failed; first failures:\n%s", l.failed, l.total.Load(), strings.Join(l.failures, "\n"))
	}
}

// versionedBuild builds testdata/plugins/versioned with Version set to version, as an
// out-of-tree module, with `gatehouse plugin build` into out.
func versionedBuild(t *testing.T, gatehouse, root, version, out string) {
	t.Helper()
	mod := abiCopyDir(t, filepath.Join(root, "integration/testdata/plugins/versioned"))
	src := filepath.Join(mod, "versioned.go")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	abiWrite(t, src, strings.Replace(string(data), `const Version = "v1"`, `const Version = "`+version+`"`, 1))
	r := abiRun(t, "", nil, gatehouse, "plugin", "build", "--quiet", "--module", mod, "--out", out, "--gatehouse-src", root)
	if want := filepath.Join(out, "versioned.so") + "\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("gatehouse plugin build (%s): exit %d, printed %q; want 0 and %q\n%s", version, r.code, r.stdout, want, r.stderr)
	}
}

// k8sPublish publishes src as versioned.so the way the kubelet updates a ConfigMap or
// projected volume: the file goes into a new timestamped folder, and a new ..data
// symlink to that folder is renamed over the old one. It returns the folder ..data
// pointed to before, and the time of the rename.
func k8sPublish(t *testing.T, dir, stamp, src string) (old string, at time.Time) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, stamp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stamp, "versioned.so"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ = os.Readlink(filepath.Join(dir, "..data"))
	if err := os.Symlink(stamp, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return old, time.Now()
}
