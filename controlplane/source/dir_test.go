package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/source"
)

func upstream(name string, port int) string {
	return fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: %s, namespace: ns}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: %d}]
`, name, port)
}

func authConfig(name string) string {
	return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s, namespace: ns}
spec:
  configs:
    - pluginAuth: {name: required_header}
`, name)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inputs runs a Dir and hands over every Input it publishes.
type inputs struct {
	ch   chan *source.Input
	done chan error
	last *source.Input
}

func run(t *testing.T, dir string) *inputs { return runWith(t, dir, nil) }

// runWith runs a Dir that remembers mem from before its start (none when nil).
func runWith(t *testing.T, dir string, mem source.Memory) *inputs {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in := &inputs{ch: make(chan *source.Input, 100), done: make(chan error, 1)}
	d := &source.Dir{Path: dir, Log: zerolog.New(zerolog.NewTestWriter(t)), Debounce: 20 * time.Millisecond, Retry: 50 * time.Millisecond, Memory: mem}
	go func() { in.done <- d.Run(ctx, func(i *source.Input) { in.ch <- i }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-in.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return in
}

// await waits until an Input satisfies ok and returns it.
func (in *inputs) await(t *testing.T, what string, ok func(*source.Input) bool) *source.Input {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if in.last != nil && ok(in.last) {
			return in.last
		}
		select {
		case i := <-in.ch:
			in.last = i
		case <-deadline:
			t.Fatalf("no input with %s within 10s; last: %s", what, describe(in.last))
		}
	}
}

// describe is an Input as "Kind ns.name@origin" lines and its problems.
func describe(in *source.Input) string {
	if in == nil {
		return "none"
	}
	var b strings.Builder
	for r := range in.Resources.All() {
		fmt.Fprintf(&b, "%s@%s ", r.Key(), filepath.Base(r.Origin))
	}
	for _, p := range in.Problems {
		fmt.Fprintf(&b, "| %s ", p)
	}
	return b.String()
}

func ids(in *source.Input) []string {
	var out []string
	for r := range in.Resources.All() {
		out = append(out, r.Key().String()+"@"+filepath.Base(r.Origin))
	}
	return out
}

func hashOf(in *source.Input, id string) string {
	for r := range in.Resources.All() {
		if r.Key().String() == id {
			return r.Hash
		}
	}
	return ""
}

func TestDirFirstInputIsCompleteAndOrdered(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.yaml"), upstream("zeta", 1)+"---\n"+authConfig("ac"))
	write(t, filepath.Join(dir, "a.yml"), upstream("alpha", 2))
	write(t, filepath.Join(dir, ".hidden.yaml"), upstream("hidden", 3))
	write(t, filepath.Join(dir, "notes.txt"), "not yaml")
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "old", "c.yaml"), upstream("old", 4))

	in := run(t, dir)
	first := <-in.ch
	// core.gatehouse.dev/v1 sorts before enterprise.gateway.gatehouse.dev/v1.
	want := []string{"Upstream ns.alpha@a.yml", "Upstream ns.zeta@b.yaml", "AuthConfig ns.ac@b.yaml"}
	if diff := cmp.Diff(want, ids(first)); diff != "" {
		t.Errorf("first input (-want +got):\n%s", diff)
	}
	if len(first.Problems) != 0 {
		t.Errorf("problems: %v", first.Problems)
	}
	for r := range first.Resources.All() {
		if r.Hash == "" || r.Object == nil {
			t.Errorf("%s: hash %q, object %v", r.Key(), r.Hash, r.Object)
		}
	}
}

func TestDirMissingAtStartFails(t *testing.T) {
	d := &source.Dir{Path: filepath.Join(t.TempDir(), "nope"), Log: zerolog.Nop()}
	published := false
	err := d.Run(context.Background(), func(*source.Input) { published = true })
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Run = %v, want a no such file error", err)
	}
	if published {
		t.Error("an input was published")
	}
}

func TestDirEdits(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, a, upstream("one", 1))
	write(t, b, upstream("two", 2))
	in := run(t, dir)
	first := in.await(t, "two upstreams", func(i *source.Input) bool { return i.Resources.Len() == 2 })
	oneHash, twoHash := hashOf(first, "Upstream ns.one"), hashOf(first, "Upstream ns.two")

	t.Run("edit changes only that hash", func(t *testing.T) {
		write(t, a, upstream("one", 11))
		got := in.await(t, "a new hash for one", func(i *source.Input) bool { return hashOf(i, "Upstream ns.one") != oneHash })
		if hashOf(got, "Upstream ns.two") != twoHash {
			t.Error("the hash of an unchanged resource changed")
		}
		oneHash = hashOf(got, "Upstream ns.one")
	})
	t.Run("bad file keeps its last good resources", func(t *testing.T) {
		write(t, a, upstream("one", 12)+"  bogus: 1\n")
		got := in.await(t, "a problem", func(i *source.Input) bool { return len(i.Problems) > 0 })
		if hashOf(got, "Upstream ns.one") != oneHash {
			t.Error("the resource of the bad file changed")
		}
		p := got.Problems[0]
		if p.Origin != a || p.Line != 7 || !strings.Contains(p.Message, "spec.bogus: unknown field") {
			t.Errorf("problem = %+v, want %s line 7 naming spec.bogus", p, a)
		}
	})
	t.Run("yaml syntax error has a line", func(t *testing.T) {
		write(t, a, "apiVersion: core.gatehouse.dev/v1\nkind: [\n")
		got := in.await(t, "a syntax problem", func(i *source.Input) bool {
			return len(i.Problems) > 0 && strings.Contains(i.Problems[0].Message, "yaml")
		})
		if got.Problems[0].Line == 0 || hashOf(got, "Upstream ns.one") != oneHash {
			t.Errorf("problem %+v; one kept: %v", got.Problems[0], hashOf(got, "Upstream ns.one") == oneHash)
		}
	})
	t.Run("fixed file serves again", func(t *testing.T) {
		write(t, a, upstream("one", 13))
		in.await(t, "no problem", func(i *source.Input) bool {
			return len(i.Problems) == 0 && hashOf(i, "Upstream ns.one") != oneHash
		})
	})
	t.Run("removed file removes its resources", func(t *testing.T) {
		if err := os.Remove(a); err != nil {
			t.Fatal(err)
		}
		in.await(t, "only two", func(i *source.Input) bool { return cmp.Equal(ids(i), []string{"Upstream ns.two@b.yaml"}) })
	})
}

func TestDirDuplicateKeepsTheServingDefinition(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "b.yaml")
	write(t, b, upstream("dup", 1))
	in := run(t, dir)
	in.await(t, "dup from b", func(i *source.Input) bool { return cmp.Equal(ids(i), []string{"Upstream ns.dup@b.yaml"}) })

	// a.yaml sorts first, but b.yaml's definition is the one serving.
	a := filepath.Join(dir, "a.yaml")
	write(t, a, upstream("dup", 2))
	got := in.await(t, "a duplicate problem", func(i *source.Input) bool { return len(i.Problems) > 0 })
	if diff := cmp.Diff([]string{"Upstream ns.dup@b.yaml"}, ids(got)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	want := source.Problem{Origin: a, Message: "Upstream ns.dup is defined in both " + b + " and " + a + "; the definition in " + b + " is used"}
	if diff := cmp.Diff([]source.Problem{want}, got.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestDirVanishingKeepsEverything(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "resources")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.yaml"), upstream("one", 1))
	in := run(t, dir)
	in.await(t, "one", func(i *source.Input) bool { return i.Resources.Len() == 1 })

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	got := in.await(t, "a directory problem", func(i *source.Input) bool { return len(i.Problems) > 0 })
	if got.Resources.Len() != 1 || got.Problems[0].Origin != dir || !strings.Contains(got.Problems[0].Message, "keeps serving") {
		t.Errorf("after removal: %s", describe(got))
	}

	// A file where the directory was: unreadable as a directory, still nothing lost.
	write(t, dir, "not a directory")
	got = in.await(t, "a not-a-directory problem", func(i *source.Input) bool {
		return len(i.Problems) > 0 && strings.Contains(i.Problems[0].Message, "not a directory")
	})
	if got.Resources.Len() != 1 {
		t.Errorf("resources lost: %s", describe(got))
	}

	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "b.yaml"), upstream("two", 2))
	in.await(t, "the new directory", func(i *source.Input) bool {
		return len(i.Problems) == 0 && cmp.Equal(ids(i), []string{"Upstream ns.two@b.yaml"})
	})
	// The watch is back: a later edit is seen.
	write(t, filepath.Join(dir, "c.yaml"), upstream("three", 3))
	in.await(t, "an edit in the new directory", func(i *source.Input) bool { return i.Resources.Len() == 2 })
}
