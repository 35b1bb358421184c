package source

import (
	"fmt"
	"iter"
	"slices"
	"sort"
)

// maxIncremental is the number of changed files above which the next Input is
// assembled from every file again rather than by editing the last one.
const maxIncremental = 64

// next is the Input after a scan, or nil when nothing in it changed. When the scan
// says which files changed, and neither the last Input nor this one has a duplicate
// key or a directory problem, the last Input is edited where those files' resources
// are (what an edit costs then does not grow with the number of other files);
// otherwise it is assembled from every file.
func (d *Dir) next(changes []fileChange, all bool) *Input {
	if all || d.last == nil || !d.lastClean || d.dups > 0 || d.dirErr != nil || len(changes) > maxIncremental {
		in := d.input()
		if d.last != nil && sameInput(d.last, in) {
			return nil
		}
		d.lastClean = d.dups == 0 && d.dirErr == nil
		return in
	}
	problems := d.problems()
	if !changed(d, changes) && slices.Equal(problems, d.last.Problems) {
		return nil
	}
	var put []*Resource
	var remove []Key
	for _, c := range changes {
		for _, r := range c.before {
			remove = append(remove, r.Key())
		}
	}
	for _, c := range changes {
		if st := d.files[c.path]; st != nil {
			for i := range st.resources { // no duplicates: only a definition this file held before
				put = append(put, &st.resources[i])
			}
		}
	}
	// A published Input is never modified: with shares what it keeps with the last one.
	return &Input{Source: d.source(), Resources: d.last.Resources.with(put, remove), Problems: problems}
}

// changed says whether any changed file holds other resources than before.
func changed(d *Dir, changes []fileChange) bool {
	for _, c := range changes {
		var now []Resource
		if st := d.files[c.path]; st != nil {
			now = st.resources
		}
		if !slices.EqualFunc(c.before, now, func(a, b Resource) bool {
			return a.Hash == b.Hash && a.Origin == b.Origin && a.Key() == b.Key()
		}) {
			return true
		}
	}
	return false
}

// problems are the problems of every file, in file order (there is no directory
// problem or duplicate when it is called).
func (d *Dir) problems() []Problem {
	paths := make([]string, 0, len(d.troubled))
	for p := range d.troubled {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []Problem
	for _, p := range paths {
		out = append(out, d.troubled[p]...)
	}
	return out
}

func (d *Dir) source() string { return "dir " + d.Path }

// input assembles the Input from every file's last good resources.
func (d *Dir) input() *Input {
	paths := make([]string, 0, len(d.files))
	n := 0
	for p, st := range d.files {
		paths = append(paths, p)
		n += len(st.resources)
	}
	sort.Strings(paths)
	rs := make([]*Resource, 0, n)
	var problems []Problem
	if d.dirErr != nil {
		problems = append(problems, Problem{Origin: d.Path,
			Message: d.dirErr.Error() + "; every resource read before keeps serving"})
	}
	for _, p := range paths {
		st := d.files[p]
		for i := range st.resources {
			rs = append(rs, &st.resources[i]) // shared with the file's state: never modified
		}
		problems = append(problems, d.troubled[p]...)
	}
	// A stable sort keeps file order, then document order, among definitions of a key.
	slices.SortStableFunc(rs, func(a, b *Resource) int { return a.Key().Compare(b.Key()) })
	rs = d.dedupe(rs, &problems)
	return &Input{Source: d.source(), Resources: newResources(rs), Problems: problems}
}

// dedupe keeps one definition per key: the one serving (in the last published Input),
// else the first.
func (d *Dir) dedupe(rs []*Resource, problems *[]Problem) []*Resource {
	out := rs[:0]
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].Key() == rs[i].Key() {
			j++
		}
		keep := i
		if j-i > 1 {
			serving := ""
			if d.last != nil {
				if r, ok := d.last.Resources.Get(rs[i].Key()); ok {
					serving = r.Origin
				}
			} else if d.Memory != nil {
				serving, _ = d.Memory.Origin(rs[i].Key()) // what served before the restart
			}
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
				*problems = append(*problems, Problem{Origin: rs[k].Origin, Message: duplicate(*rs[keep], *rs[k])})
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

func sameInput(a, b *Input) bool {
	if a.Resources.Len() != b.Resources.Len() || !slices.Equal(a.Problems, b.Problems) {
		return false
	}
	next, stop := iter.Pull(b.Resources.All())
	defer stop()
	for x := range a.Resources.All() {
		y, _ := next()
		if x.Hash != y.Hash || x.Origin != y.Origin || x.Key() != y.Key() {
			return false
		}
	}
	return true
}

// find is where k is, or would be, in rs (in key order).
func find(rs []*Resource, k Key) (int, bool) {
	return slices.BinarySearchFunc(rs, k, func(r *Resource, k Key) int { return r.Key().Compare(k) })
}
