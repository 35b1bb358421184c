package filesource_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/server/filesource"
)

// applied records every set a Source applies, as the AuthConfig ids it holds.
type applied struct {
	ch chan []string
}

func newApplied() *applied { return &applied{ch: make(chan []string, 100)} }

func (a *applied) apply(set *apiv1.Set) {
	var ids []string
	for _, ac := range set.AuthConfigs {
		ids = append(ids, ac.Metadata.ID())
	}
	a.ch <- ids
}

// next waits for the next applied set.
func (a *applied) next(t *testing.T) []string {
	t.Helper()
	select {
	case ids := <-a.ch:
		return ids
	case <-time.After(10 * time.Second):
		t.Fatal("no config applied within 10s")
		return nil
	}
}

// none checks nothing was applied so far.
func (a *applied) none(t *testing.T) {
	t.Helper()
	select {
	case ids := <-a.ch:
		t.Fatalf("applied %v, want nothing applied", ids)
	default:
	}
}

// logs is a zerolog writer the test can wait on.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// waitFor waits until a log line contains msg, and forgets the log up to it.
func (l *logs) waitFor(t *testing.T, msg string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		s := l.buf.String()
		if i := strings.Index(s, msg); i >= 0 {
			end := i + strings.IndexByte(s[i:], '\n') + 1
			line := s[strings.LastIndexByte(s[:i], '\n')+1 : end]
			rest := s[end:]
			l.buf.Reset()
			l.buf.WriteString(rest)
			l.mu.Unlock()
			return line
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within 10s; log:\n%s", msg, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func authConfig(name string) string {
	return "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: " + name +
		"}\nspec: {configs: [{pluginAuth: {name: p}}]}\n"
}

// write replaces path's content the way editors do: a new file renamed over the old.
func write(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// writeInPlace truncates and rewrites path, as `echo > file` does.
func writeInPlace(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newSource(t *testing.T, path string) (*filesource.Source, *applied, *logs) {
	a, l := newApplied(), &logs{}
	return &filesource.Source{Path: path, Log: zerolog.New(l).Level(zerolog.DebugLevel), Apply: a.apply}, a, l
}

// watch runs s.Watch until the test ends, once its watch is in place.
func watch(t *testing.T, s *filesource.Source, l *logs) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	// fsnotify has no "ready" signal: touch a file nobody reads until the watch
	// reports it, so later edits cannot happen before the watch exists.
	dir := s.Path
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	probe := filepath.Join(dir, "probe.txt")
	deadline := time.Now().Add(10 * time.Second)
	for {
		writeInPlace(t, probe, time.Now().String())
		l.mu.Lock()
		seen := strings.Contains(l.buf.String(), "probe.txt")
		l.mu.Unlock()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch did not start within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Let the probe's debounced reload happen: it finds nothing new.
	l.waitFor(t, "config unchanged")
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		path    string
		want    []string
		wantErr string
	}{
		{
			name:  "folder",
			files: map[string]string{"a.yaml": authConfig("a"), "b.yml": authConfig("b"), "c.txt": "ignored"},
			want:  []string{"default.a", "default.b"},
		},
		{
			name:  "file",
			files: map[string]string{"one.yaml": authConfig("one") + "---\n" + authConfig("two")},
			path:  "one.yaml",
			want:  []string{"default.one", "default.two"},
		},
		{
			name:    "bad document: nothing applied",
			files:   map[string]string{"a.yaml": authConfig("a"), "b.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nbogus: 1\n"},
			wantErr: `b.yaml:4: Secret default.s: bogus: unknown field`,
		},
		{
			name:    "missing",
			path:    "nope.yaml",
			wantErr: "no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeInPlace(t, filepath.Join(dir, name), content)
			}
			s, a, _ := newSource(t, filepath.Join(dir, tt.path))
			err := s.Load()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want one containing %q", err, tt.wantErr)
				}
				a.none(t)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tt.want, a.next(t)); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchFolder(t *testing.T) {
	dir := t.TempDir()
	a1 := filepath.Join(dir, "a.yaml")
	writeInPlace(t, a1, authConfig("one"))
	s, a, l := newSource(t, dir)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default.one"}, a.next(t)); diff != "" {
		t.Fatalf("loaded (-want +got):\n%s", diff)
	}
	watch(t, s, l)

	steps := []struct {
		name string
		edit func(t *testing.T)
		// want is the next set applied; nil means the edit is not applied, and the log
		// says logMsg.
		want   []string
		logMsg string
	}{
		{name: "edit in place", edit: func(t *testing.T) { writeInPlace(t, a1, authConfig("two")) }, want: []string{"default.two"}},
		{name: "editor-style replace", edit: func(t *testing.T) { write(t, a1, authConfig("three")) }, want: []string{"default.three"}},
		{name: "new file", edit: func(t *testing.T) { write(t, filepath.Join(dir, "b.yml"), authConfig("b")) }, want: []string{"default.three", "default.b"}},
		{name: "invalid YAML", edit: func(t *testing.T) { write(t, a1, "kind: [unclosed\n") }, logMsg: "config not reloaded; the previous config keeps serving"},
		{name: "unknown field", edit: func(t *testing.T) { write(t, a1, authConfig("x")+"extra: 1\n") }, logMsg: "config not reloaded; the previous config keeps serving"},
		{name: "fixed", edit: func(t *testing.T) { write(t, a1, authConfig("four")) }, want: []string{"default.four", "default.b"}},
		{name: "unchanged rewrite", edit: func(t *testing.T) { write(t, a1, authConfig("four")) }, logMsg: "config unchanged; not applied again"},
		{name: "non-YAML file", edit: func(t *testing.T) { write(t, filepath.Join(dir, "notes.txt"), "hello") }, logMsg: "config unchanged; not applied again"},
		// Regression: a folder named like a YAML file made every later reload fail
		// with "is a directory".
		{name: "folder named like YAML", edit: func(t *testing.T) {
			if err := os.Mkdir(filepath.Join(dir, "archive.yaml"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, logMsg: "config unchanged; not applied again"},
		// Regression: hidden files, which Load skips, counted as changes.
		{name: "hidden file", edit: func(t *testing.T) { writeInPlace(t, filepath.Join(dir, ".a.yaml"), "junk") }, logMsg: "config unchanged; not applied again"},
		{name: "file removed", edit: func(t *testing.T) {
			if err := os.Remove(filepath.Join(dir, "b.yml")); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"default.four"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.edit(t)
			if st.want == nil {
				l.waitFor(t, st.logMsg)
				a.none(t)
				return
			}
			if diff := cmp.Diff(st.want, a.next(t)); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			l.waitFor(t, "config reloaded")
		})
	}
}

func TestWatchFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeInPlace(t, path, authConfig("one"))
	s, a, l := newSource(t, path)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	watch(t, s, l)

	// A sibling changing is seen by the folder watch but changes nothing.
	writeInPlace(t, filepath.Join(dir, "other.yaml"), authConfig("other"))
	l.waitFor(t, "config unchanged; not applied again")
	a.none(t)

	write(t, path, authConfig("two"))
	if diff := cmp.Diff([]string{"default.two"}, a.next(t)); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
}

// kubeVolume lays out a folder the way the kubelet mounts a ConfigMap: the files live
// in a timestamped folder, "..data" links to it, and each top-level name links
// through "..data".
type kubeVolume struct {
	dir string
	gen int
}

func (k *kubeVolume) publish(t *testing.T, files map[string]string) {
	t.Helper()
	k.gen++
	ts := filepath.Join(k.dir, "..2026_01_0"+string(rune('0'+k.gen))+"_00_00_00.000000000")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		writeInPlace(t, filepath.Join(ts, name), content)
	}
	old, _ := os.Readlink(filepath.Join(k.dir, "..data"))
	tmp := filepath.Join(k.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(k.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(k.dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(k.dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWatchKubernetesSymlinkSwap(t *testing.T) {
	for _, mode := range []string{"folder", "file"} {
		t.Run(mode, func(t *testing.T) {
			vol := &kubeVolume{dir: t.TempDir()}
			vol.publish(t, map[string]string{"auth.yaml": authConfig("one")})
			path := vol.dir
			if mode == "file" {
				path = filepath.Join(vol.dir, "auth.yaml")
			}
			s, a, l := newSource(t, path)
			if err := s.Load(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"default.one"}, a.next(t)); diff != "" {
				t.Fatalf("loaded (-want +got):\n%s", diff)
			}
			watch(t, s, l)

			vol.publish(t, map[string]string{"auth.yaml": authConfig("two")})
			if diff := cmp.Diff([]string{"default.two"}, a.next(t)); diff != "" {
				t.Errorf("after the swap (-want +got):\n%s", diff)
			}

			vol.publish(t, map[string]string{"auth.yaml": "kind: [broken\n"})
			l.waitFor(t, "config not reloaded")
			a.none(t)

			vol.publish(t, map[string]string{"auth.yaml": authConfig("three")})
			if diff := cmp.Diff([]string{"default.three"}, a.next(t)); diff != "" {
				t.Errorf("after the third swap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchStopsWithContext(t *testing.T) {
	s, _, _ := newSource(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Watch(ctx); err != nil {
		t.Errorf("Watch after cancel = %v, want nil", err)
	}
}

func TestWatchMissingPath(t *testing.T) {
	s, _, _ := newSource(t, filepath.Join(t.TempDir(), "nope"))
	err := s.Watch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "filesource: watch ") {
		t.Errorf("Watch of a missing folder = %v, want a filesource: watch error", err)
	}
}

// TestWatchAppliesAChangeMadeAfterLoad: extauth serves (and a client may edit) while its
// first load builds, before the watch exists; an edit then sent no event and was never
// applied (integration/foundation TestExtauthReloadsConfigFromDisk, once Load moved
// behind serving). Watch reads once when it starts after a Load.
func TestWatchAppliesAChangeMadeAfterLoad(t *testing.T) {
	dir := t.TempDir()
	writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig("one"))
	s, a, l := newSource(t, dir)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig("two"))
	watch(t, s, l)
	if diff := cmp.Diff([]string{"default.two"}, a.next(t)); diff != "" {
		t.Errorf("the edit made before the watch (-want +got):\n%s", diff)
	}
}
