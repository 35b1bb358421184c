package source

import (
	"crypto/sha256"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// fileChange is a file whose state a scan changed, with the resources it held before.
type fileChange struct {
	path   string
	before []Resource
}

// scan reads the directory. With dirty == nil the directory is listed and every file
// read. Otherwise only the files in dirty are looked at, without a listing: with tens
// of thousands of files, listing them costs more than the edit that caused the event.
// A file whose content did not change is not decoded again.
//
// It returns the files whose resources or problems changed; all is true when it read
// the whole directory, and the caller should not rely on changes then.
func (d *Dir) scan(dirty map[string]bool) (changes []fileChange, all bool, err error) {
	var toRead []string
	if dirty == nil {
		names, err := d.list()
		if err != nil {
			d.dirErr = err
			return nil, true, err
		}
		d.dirErr = nil
		if len(d.files) == 0 { // the first read: the maps grow to this size at once
			d.files = make(map[string]*fileState, len(names))
			d.defs = make(map[uint64]int32, len(names))
		}
		present := make(map[string]bool, len(names))
		for _, f := range names {
			present[f] = true
		}
		for f := range d.files {
			if !present[f] {
				d.drop(f) // removed from the directory: its resources go with it
			}
		}

		toRead = names
	} else {
		for f := range dirty {
			if fi, err := d.stat(f); err != nil || fi.IsDir() {
				// Gone, or not a file any more (as a listing would skip it).
				if st := d.files[f]; st != nil {
					changes = append(changes, fileChange{path: f, before: st.resources})
					d.drop(f)
				}
				continue
			}
			toRead = append(toRead, f)
		}
		sort.Strings(toRead)
	}
	for i, r := range loadAll(toRead, d.files, d.shortIsEnd) {
		path := toRead[i]
		var before []Resource
		if st := d.files[path]; st != nil {
			before = st.resources
		}
		if d.apply(path, r) {
			changes = append(changes, fileChange{path: path, before: before})
		}
	}
	return changes, dirty == nil, nil
}

// list returns the paths of the YAML files directly in the directory, sorted.
func (d *Dir) list() ([]string, error) {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		return nil, fmt.Errorf("resources directory %s: %w", d.Path, err)
	}
	d.pageCache = shortReadIsEnd(d.Path)
	var out []string
	clear(d.linked)
	for _, e := range entries {
		name := e.Name()
		if !isResourceFile(name) {
			continue
		}
		p := filepath.Join(d.Path, name)
		if e.Type()&os.ModeSymlink != 0 {
			d.setLinked(p, true) // even when broken: a ..data swap may mend it
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

// shortIsEnd says whether a short read of the resource file path is its end: the
// directory is on a filesystem where that is so, and path is a file in it, not a
// symbolic link (which may lead to another filesystem).
func (d *Dir) shortIsEnd(path string) bool { return d.pageCache && !d.linked[path] }

// stat is os.Stat of a resource file that also records whether it is a symlink.
func (d *Dir) stat(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	link := err == nil && fi.Mode()&os.ModeSymlink != 0
	d.setLinked(path, link)
	if !link {
		return fi, err
	}
	return os.Stat(path)
}

func (d *Dir) setLinked(path string, link bool) {
	switch {
	case link && d.linked == nil:
		d.linked = map[string]bool{path: true}
	case link:
		d.linked[path] = true
	default:
		delete(d.linked, path)
	}
}

// isResourceFile says whether a directory entry's name is one the source reads: a
// *.yaml or *.yml file that is not hidden (editors' swap files are).
func isResourceFile(name string) bool {
	ext := filepath.Ext(name)
	return !strings.HasPrefix(name, ".") && (ext == ".yaml" || ext == ".yml")
}

// loaded is what reading one file gave.
type loaded struct {
	sum       [16]byte
	unchanged bool // same content as the last good read
	resources []Resource
	problems  []Problem
}

// loadAll reads and decodes files, on every core: decoding is most of the time the
// first read of a large directory takes. shortIsEnd says, of a path, whether a short
// read of it is its end (fileReader).
func loadAll(paths []string, known map[string]*fileState, shortIsEnd func(string) bool) []loaded {
	out := make([]loaded, len(paths))
	if len(paths) == 1 {
		out[0] = load(&fileReader{}, paths[0], known[paths[0]], shortIsEnd(paths[0]))
		return out
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r fileReader
			for i := range next {
				out[i] = load(&r, paths[i], known[paths[i]], shortIsEnd(paths[i]))
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

// load reads (with r) and decodes one file; st is what it held before (nil if new),
// only read. Nothing decoded refers to the bytes read, which r reuses.
func load(r *fileReader, path string, st *fileState, shortIsEnd bool) loaded {
	data, err := r.read(path, shortIsEnd)
	if err != nil {
		return loaded{problems: []Problem{{Origin: path, Message: "cannot be read: " + err.Error()}}}
	}
	full := sha256.Sum256(data)
	sum := [16]byte(full[:16])
	if st != nil && sum == st.sum && !st.troubled && st.resources != nil {
		return loaded{sum: sum, unchanged: true}
	}
	res, probs := Decode(data, path)
	return loaded{sum: sum, resources: res, problems: probs}
}

// apply records what reading a file gave and says whether the file's resources or
// problems changed. A file that cannot be read or decoded keeps the resources of its
// last good version.
func (d *Dir) apply(path string, r loaded) bool {
	st := d.files[path]
	if st == nil {
		st = &fileState{}
		d.files[path] = st
	}
	switch {
	case r.unchanged:
		return false
	case len(r.problems) > 0:
		if slices.Equal(d.troubled[path], r.problems) {
			return false
		}
		if d.last == nil && st.resources == nil && d.Memory != nil {
			d.setResources(st, d.Memory.From(path)) // what served before the restart
		}
		st.troubled = true
		d.troubled[path] = r.problems
	default:
		st.sum, st.troubled = r.sum, false
		d.setResources(st, r.resources)
		delete(d.troubled, path)
	}
	return true
}

// drop forgets a file that is gone.
func (d *Dir) drop(path string) {
	if st := d.files[path]; st != nil {
		d.setResources(st, nil)
		delete(d.files, path)
		delete(d.troubled, path)
	}
}

// setResources replaces the resources of st, counting the definitions of each key so
// that duplicates are known without looking at every file.
func (d *Dir) setResources(st *fileState, rs []Resource) {
	for i := range st.resources {
		k := fingerprint(&st.resources[i])
		n := d.defs[k] - 1
		if n == 1 {
			d.dups--
		}
		if n == 0 {
			delete(d.defs, k)
		} else {
			d.defs[k] = n
		}
	}
	for i := range rs {
		k := fingerprint(&rs[i])
		d.defs[k]++
		if d.defs[k] == 2 {
			d.dups++
		}
	}
	st.resources = rs
}

// keySeed seeds the fingerprints of keys.
var keySeed = maphash.MakeSeed()

// fingerprint is a 64-bit hash of r's key.
func fingerprint(r *Resource) uint64 {
	var h maphash.Hash
	h.SetSeed(keySeed)
	for _, s := range [...]string{r.APIVersion, r.Kind, r.Namespace, r.Name} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	return h.Sum64()
}
