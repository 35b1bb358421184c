package filesource_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// problems records what a Source reports through Problem.
type problems struct {
	mu   sync.Mutex
	last error
	n    int
}

func (p *problems) report(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last, p.n = err, p.n+1
}

// waitFor waits until the last report contains want ("" for no problem).
func (p *problems) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		last, n := p.last, p.n
		p.mu.Unlock()
		switch {
		case n > 0 && want == "" && last == nil:
			return
		case want != "" && last != nil && strings.Contains(last.Error(), want):
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("last problem reported = %v, want %q", last, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Regression: deleting the resources folder and creating it again stopped reloading
// for good (the watch died with the folder), while the status still said Accepted.
func TestWatchFolderDeletedAndCreatedAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig("one"))
	s, a, l := newSource(t, dir)
	p := &problems{}
	s.Problem = p.report
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	p.waitFor(t, "")
	watch(t, s, l)

	for round, name := range []string{"two", "three"} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		l.waitFor(t, "config folder removed; the previous config keeps serving until it is back")
		p.waitFor(t, dir+" is gone; the previous config keeps serving until it is back")
		a.none(t)

		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		l.waitFor(t, "config folder is back; watching it again")
		writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig(name))
		if diff := cmp.Diff([]string{"default." + name}, a.next(t)); diff != "" {
			t.Errorf("round %d: applied once the folder is back (-want +got):\n%s", round, diff)
		}
		p.waitFor(t, "")
	}

	// An edit after that is seen too: the folder is watched again, not just read once.
	writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig("four"))
	if diff := cmp.Diff([]string{"default.four"}, a.next(t)); diff != "" {
		t.Errorf("edit after the folder came back (-want +got):\n%s", diff)
	}
}

// Regression: a file that failed to parse blocked every reload, but only the log said
// so. The problem is reported until an edit mends it, even one that restores the
// content serving before (which is not applied again).
func TestProblemReportedUntilMended(t *testing.T) {
	dir := t.TempDir()
	a1 := filepath.Join(dir, "a.yaml")
	writeInPlace(t, a1, authConfig("one"))
	s, a, l := newSource(t, dir)
	p := &problems{}
	s.Problem = p.report
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	watch(t, s, l)

	write(t, a1, authConfig("one")+"---\nkind: [unclosed\n")
	p.waitFor(t, a1+":7: document 2: yaml: did not find expected ',' or ']' (in what starts on line 6)")
	a.none(t)
	write(t, a1, authConfig("one"))
	p.waitFor(t, "")
	l.waitFor(t, "config unchanged; not applied again")
	a.none(t)
}

// Regression: subfolders were ignored without a word.
func TestSubfoldersAreNamedInTheLog(t *testing.T) {
	dir := t.TempDir()
	writeInPlace(t, filepath.Join(dir, "a.yaml"), authConfig("one"))
	for _, sub := range []string{"team-b", ".hidden"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, a, l := newSource(t, dir)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	a.next(t)
	line := l.waitFor(t, "subfolders of the config folder are not read")
	if !strings.Contains(line, `"subfolders":["team-b"]`) {
		t.Errorf("log line %s does not name exactly team-b", line)
	}
}
