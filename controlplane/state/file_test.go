package state

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// examples are the resources of the repository's example folders, every kind among
// them (a Secret with a client secret, Settings, OIDC and plugin AuthConfigs).
func examples(t *testing.T, root string) []*source.Resource {
	t.Helper()
	var out []*source.Resource
	seen := map[source.Key]bool{} // the folders share a few keys; a state holds each once
	for _, dir := range []string{"default", "oidc", "jwt-rbac"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "examples", dir, "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rs, problems := source.Decode(data, filepath.Join(root, dir+"-"+filepath.Base(f)))
			if len(problems) > 0 {
				t.Fatalf("%s: %v", f, problems)
			}
			for i := range rs {
				if !seen[rs[i].Key()] {
					seen[rs[i].Key()] = true
					out = append(out, &rs[i])
				}
			}
		}
	}
	kinds := map[string]bool{}
	for _, r := range out {
		kinds[r.Kind] = true
	}
	for _, k := range []string{"AuthConfig", "VirtualService", "Upstream", "Secret", "Settings"} {
		if !kinds[k] {
			t.Fatalf("the examples hold no %s: the round trip would not cover it", k)
		}
	}
	return out
}

func TestEveryKindComesBackAsItWasWritten(t *testing.T) {
	root := t.TempDir()
	rs := examples(t, root)
	f := &File{Path: filepath.Join(t.TempDir(), "sub", "cp.state"), Root: root, Source: "dir " + root}
	if err := f.Save(rs); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600: it holds Secrets", fi.Mode().Perm())
	}
	// The directory is named another way at the next start: origins follow it.
	moved := filepath.Join(root, ".", "")
	mem, err := (&File{Path: f.Path, Root: moved}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if mem.Len() != len(rs) {
		t.Fatalf("remembered %d resources, saved %d", mem.Len(), len(rs))
	}
	for _, r := range rs {
		got, ok := mem.Get(r.Key())
		if !ok {
			t.Errorf("%s: not remembered", r.Key())
			continue
		}
		if diff := cmp.Diff(r.Object, got.Object); diff != "" {
			t.Errorf("%s came back different (-saved +loaded):\n%s", r.Key(), diff)
		}
		if got.Origin != r.Origin {
			t.Errorf("%s: origin %q, want %q", r.Key(), got.Origin, r.Origin)
		}
		if o, _ := mem.Origin(r.Key()); o != r.Origin {
			t.Errorf("%s: Origin %q, want %q", r.Key(), o, r.Origin)
		}
		found := false
		for _, x := range mem.From(r.Origin) {
			found = found || x.Key() == r.Key()
		}
		if !found {
			t.Errorf("%s: not among From(%q)", r.Key(), r.Origin)
		}
	}
}

func TestAMissingFileIsAnEmptyMemory(t *testing.T) {
	mem, err := (&File{Path: filepath.Join(t.TempDir(), "none.state")}).Load()
	if err != nil || mem.Len() != 0 {
		t.Fatalf("Load of a missing file = %v resources, %v; want none, no error", mem, err)
	}
}

// A damaged file is an error that names the file and line and never quotes it (it
// holds Secrets).
func TestADamagedFileIsRefusedWithoutQuotingIt(t *testing.T) {
	root := t.TempDir()
	rs := examples(t, root)
	f := &File{Path: filepath.Join(t.TempDir(), "cp.state"), Root: root}
	if err := f.Save(rs); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.Path)
	lines := strings.SplitAfter(string(data), "\n")
	secret := ""
	for i, l := range lines {
		if strings.Contains(l, `"kind":"Secret"`) {
			secret = l
			lines[i] = l[:len(l)/2] + "\n" // damaged mid-way
			break
		}
	}
	if secret == "" {
		t.Fatal("no Secret line in the state file")
	}
	for name, content := range map[string]string{
		"damaged":   strings.Join(lines, ""),
		"cut short": strings.Join(lines[:len(lines)-2], ""),
		"foreign":   `{"format":"something else"}` + "\n",
	} {
		if err := os.WriteFile(f.Path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := f.Load()
		if err == nil {
			t.Errorf("%s: Load succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), f.Path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
		if strings.Contains(err.Error(), secret[20:40]) {
			t.Errorf("%s: error %q quotes the file", name, err)
		}
	}
}

// TestASavedResourceIsWrittenAsBefore: a Save that reuses the lines of resources saved
// before writes the file a first Save of the same set writes (after the header's
// time), and forgets what it no longer holds.
func TestASavedResourceIsWrittenAsBefore(t *testing.T) {
	root := t.TempDir()
	rs := examples(t, root)
	body := func(f *File) string {
		t.Helper()
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), "\n") // the header has the time of writing
		return rest
	}
	fresh := &File{Path: filepath.Join(t.TempDir(), "fresh"), Root: root}
	if err := fresh.Save(rs[1:]); err != nil {
		t.Fatal(err)
	}
	again := &File{Path: filepath.Join(t.TempDir(), "again"), Root: root}
	for _, set := range [][]*source.Resource{rs, rs[1:]} {
		if err := again.Save(set); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(body(fresh), body(again)); d != "" {
		t.Errorf("saved with lines kept from before (-fresh +again):\n%s", d)
	}
	if _, ok := again.lines[rs[0]]; ok || len(again.lines) != len(rs)-1 {
		t.Errorf("%d lines kept after a Save of %d resources, the one left out among them: %v", len(again.lines), len(rs)-1, ok)
	}
}

// TestSameComparesWithoutDecoding: every saved resource is the same as its remembered
// version, without a decoding of it; an edited one, or one never saved, is not.
func TestSameComparesWithoutDecoding(t *testing.T) {
	root := t.TempDir()
	rs := examples(t, root)
	f := &File{Path: filepath.Join(t.TempDir(), "cp.state"), Root: root}
	if err := f.Save(rs[1:]); err != nil {
		t.Fatal(err)
	}
	m, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs[1:] {
		if !m.Same(r) {
			t.Errorf("%s: not the same as what was saved", r.Key())
		}
	}
	if len(m.decoded) != 0 {
		t.Errorf("%d remembered versions decoded to compare them", len(m.decoded))
	}
	if m.Same(rs[0]) {
		t.Errorf("%s: the same, though never saved", rs[0].Key())
	}
	edited := *rs[1]
	edited.Object = map[string]any{"spec": "another"}
	if m.Same(&edited) {
		t.Errorf("%s: the same after an edit", edited.Key())
	}
}

// TestASaveIsNotGatheredInMemory: a Save of resources saved before writes their lines
// as they are, through a small buffer, so it allocates far less than the file holds:
// a copy of the whole file per save was a burst of work beside the pushes of the run
// that offered it.
func TestASaveIsNotGatheredInMemory(t *testing.T) {
	root := t.TempDir()
	one := examples(t, root)
	var rs []*source.Resource
	for i := 0; len(rs) < 20000; i++ { // some megabytes of lines
		for _, r := range one {
			c := *r
			c.Name = fmt.Sprintf("%s-%d", r.Name, i)
			rs = append(rs, &c)
		}
	}
	f := &File{Path: filepath.Join(t.TempDir(), "state"), Root: root}
	if err := f.Save(rs); err != nil { // encodes every line
		t.Fatal(err)
	}
	info, err := os.Stat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := f.Save(rs); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(info.Size())/2 {
		t.Errorf("a Save of %d lines saved before allocated %d bytes; the file holds %d", len(rs), allocated, info.Size())
	}
}
