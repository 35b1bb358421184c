package source

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// scan reads the directory. With dirty == nil every file is read; otherwise only the
// files in dirty and files not seen before (a listing is still taken, to see removals).
// A file whose content did not change is not decoded again.
func (d *Dir) scan(dirty map[string]bool) error {
	names, err := d.list()
	if err != nil {
		d.dirErr = err
		return err
	}
	d.dirErr = nil
	present := make(map[string]bool, len(names))
	var toRead []string
	for _, f := range names {
		present[f] = true
		if st := d.files[f]; st != nil && dirty != nil && !dirty[f] {
			continue
		}
		toRead = append(toRead, f)
	}
	for i, r := range loadAll(toRead, d.files) {
		d.apply(toRead[i], r)
	}
	for f := range d.files {
		if !present[f] {
			delete(d.files, f) // removed from the directory: its resources go with it
		}
	}
	return nil
}

// list returns the paths of the YAML files directly in the directory, sorted.
func (d *Dir) list() ([]string, error) {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return nil, fmt.Errorf("resources directory %s: %w", d.Path, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if ext := filepath.Ext(name); strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		p := filepath.Join(d.Path, name)
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil || fi.IsDir() {
				continue
			}
		} else if e.IsDir() {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// loaded is what reading one file gave.
type loaded struct {
	sum       [32]byte
	unchanged bool // same content as the last good read
	resources []Resource
	problems  []Problem
}

// loadAll reads and decodes files, on every core: decoding is most of the time the
// first read of a large directory takes.
func loadAll(paths []string, known map[string]*fileState) []loaded {
	out := make([]loaded, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = load(paths[i], known[paths[i]])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// load reads and decodes one file; st is what it held before (nil if new), only read.
func load(path string, st *fileState) loaded {
	data, err := os.ReadFile(path)
	if err != nil {
		return loaded{problems: []Problem{{Origin: path, Message: "cannot be read: " + err.Error()}}}
	}
	sum := sha256.Sum256(data)
	if st != nil && sum == st.sum && st.problems == nil && st.resources != nil {
		return loaded{sum: sum, unchanged: true}
	}
	res, probs := Decode(data, path)
	return loaded{sum: sum, resources: res, problems: probs}
}

// apply records what reading a file gave. A file that cannot be read or decoded keeps
// the resources of its last good version.
func (d *Dir) apply(path string, r loaded) {
	st := d.files[path]
	if st == nil {
		st = &fileState{}
		d.files[path] = st
	}
	switch {
	case r.unchanged:
	case len(r.problems) > 0:
		st.problems = r.problems
	default:
		st.sum, st.resources, st.problems = r.sum, r.resources, nil
	}
}

// input assembles the Input from every file's last good resources.
func (d *Dir) input() *Input {
	paths := make([]string, 0, len(d.files))
	n := 0
	for p, st := range d.files {
		paths = append(paths, p)
		n += len(st.resources)
	}
	sort.Strings(paths)
	in := &Input{Source: "dir " + d.Path, Resources: make([]Resource, 0, n)}
	if d.dirErr != nil {
		in.Problems = append(in.Problems, Problem{Origin: d.Path,
			Message: d.dirErr.Error() + "; every resource read before keeps serving"})
	}
	for _, p := range paths {
		st := d.files[p]
		in.Resources = append(in.Resources, st.resources...)
		in.Problems = append(in.Problems, st.problems...)
	}
	// A stable sort keeps file order, then document order, among definitions of a key.
	slices.SortStableFunc(in.Resources, func(a, b Resource) int { return a.Key().Compare(b.Key()) })
	in.Resources = d.dedupe(in.Resources, &in.Problems)
	return in
}

// dedupe keeps one definition per key: the one serving, else the first.
func (d *Dir) dedupe(rs []Resource, problems *[]Problem) []Resource {
	out := rs[:0]
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].Key() == rs[i].Key() {
			j++
		}
		keep := i
		if j-i > 1 {
			serving := d.serving[rs[i].Key()]
			for k := i; k < j; k++ {
				if rs[k].Origin == serving {
					keep = k
					break
				}
			}
			for k := i; k < j; k++ {
				if k == keep {
					continue
				}
				*problems = append(*problems, Problem{Origin: rs[k].Origin, Message: duplicate(rs[keep], rs[k])})
			}
		}
		out = append(out, rs[keep])
		i = j
	}
	return out
}

func duplicate(kept, dropped Resource) string {
	k := kept.Key()
	if kept.Origin == dropped.Origin {
		return fmt.Sprintf("%s is defined twice in %s; the first definition is used", k, kept.Origin)
	}
	return fmt.Sprintf("%s is defined in both %s and %s; the definition in %s is used", k, kept.Origin, dropped.Origin, kept.Origin)
}

func hasKey(rs []Resource, k Key) bool {
	_, found := slices.BinarySearchFunc(rs, k, func(r Resource, k Key) int { return r.Key().Compare(k) })
	return found
}
