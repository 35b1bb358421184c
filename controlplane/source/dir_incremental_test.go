package source

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"
)

func upstreamYAML(name string, port int) string {
	return fmt.Sprintf("apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: %s, namespace: ns}\nspec:\n  static:\n    hosts: [{addr: 127.0.0.1, port: %d}]\n", name, port)
}

// newTestDir is a Dir on dir as Run leaves it after its first read.
func newTestDir(t testing.TB, dir string) *Dir {
	t.Helper()
	d := &Dir{Path: dir, Log: zerolog.Nop(), files: map[string]*fileState{}, troubled: map[string][]Problem{}, defs: map[uint64]int32{}}
	if _, _, err := d.scan(nil); err != nil {
		t.Fatal(err)
	}
	d.last = d.next(nil, true)
	return d
}

// step reads the files an event named and makes the next Input, as watch does.
func (d *Dir) step(dirty ...string) {
	set := map[string]bool{}
	for _, f := range dirty {
		set[f] = true
	}
	changes, all, _ := d.scan(set)
	if in := d.next(changes, all); in != nil {
		d.last = in
	}
}

// TestIncrementalInputIsTheFullInput edits, breaks, duplicates and removes files at
// random; after each event the Input made by editing the last one must be the Input
// assembled from every file, and what a fresh read of the directory gives, and the
// last Input must be as it was.
func TestIncrementalInputIsTheFullInput(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	file := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i)) }
	for i := range 20 {
		if err := os.WriteFile(file(i), []byte(upstreamYAML(fmt.Sprintf("u%02d", i), i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := newTestDir(t, dir)
	ops := []struct {
		name    string
		content func(i int) string
	}{
		{"edit", func(i int) string { return upstreamYAML(fmt.Sprintf("u%02d", i), 1000+rng.IntN(1000)) }},
		{"rename its resource", func(i int) string { return upstreamYAML(fmt.Sprintf("v%02d", i), 1) }},
		{"two resources", func(i int) string {
			return upstreamYAML(fmt.Sprintf("u%02d", i), 2) + "---\n" + upstreamYAML(fmt.Sprintf("w%02d", i), 2)
		}},
		{"break it", func(int) string { return "kind: [\n" }},
		{"unknown field", func(i int) string { return upstreamYAML(fmt.Sprintf("u%02d", i), 3) + "  bogus: 1\n" }},
		{"duplicate another's", func(int) string { return upstreamYAML(fmt.Sprintf("u%02d", rng.IntN(20)), 4) }},
		{"remove", nil},
	}
	for step := range 400 {
		op, i := ops[rng.IntN(len(ops))], rng.IntN(25)
		if op.content == nil {
			_ = os.Remove(file(i))
		} else if err := os.WriteFile(file(i), []byte(op.content(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		last, was := d.last, d.last.Resources.Slice()
		d.step(file(i))
		full := d.input()
		opts := cmp.Options{cmpopts.IgnoreFields(Resource{}, "Object"), cmp.Transformer("Resources", Resources.Slice), cmpopts.EquateEmpty()}
		// The Inputs and the files' state share their resources: a published Input
		// stays as it was.
		if diff := cmp.Diff(was, last.Resources.Slice(), opts); diff != "" {
			t.Fatalf("step %d (%s f%02d): the last Input was modified (-before +after):\n%s", step, op.name, i, diff)
		}
		if diff := cmp.Diff(full, d.last, opts); diff != "" {
			t.Fatalf("step %d (%s f%02d): incremental input differs from the full one (-full +incremental):\n%s", step, op.name, i, diff)
		}
		if d.dups == 0 && len(d.troubled) == 0 {
			// Which duplicate serves, and what a bad file keeps, depend on history;
			// without either, a fresh read agrees.
			fresh := newTestDir(t, dir)
			if diff := cmp.Diff(fresh.last, d.last, opts); diff != "" {
				t.Fatalf("step %d (%s f%02d): input differs from a fresh read (-fresh +incremental):\n%s", step, op.name, i, diff)
			}
		}
	}
}

// BenchmarkDirEdit is one edited file among n (three resources per service, one file
// each, as integration/bench writes them): the read of that file and the next Input.
func BenchmarkDirEdit(b *testing.B) {
	for _, n := range []int{3000, 30000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("u%05d.yaml", i)), []byte(upstreamYAML(fmt.Sprintf("u%05d", i), 1)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			d := newTestDir(b, dir)
			edited := filepath.Join(dir, fmt.Sprintf("u%05d.yaml", n/2))
			k := 0
			for b.Loop() {
				k++
				b.StopTimer()
				if err := os.WriteFile(edited, []byte(upstreamYAML(fmt.Sprintf("u%05d", n/2), 2+k%2)), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				before := d.last
				d.step(edited)
				if d.last == before {
					b.Fatal("the edit was not published")
				}
			}
		})
	}
}
