package source

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
)

// Dir is the directory Source: every *.yaml and *.yml file directly in Path, watched
// with fsnotify.
//
// Subfolders are not read, as `gatehouse extauth --config DIR` does not read them:
// the same folder means the same resources to both, a Kubernetes ConfigMap mount is
// flat (its ..data folder is reached through the top-level symlinks), and an "old/"
// folder of backups is not served by surprise. Hidden files are skipped (editors'
// swap files). Symlinks are followed.
//
// Never empty, never partial:
//   - Run reads the whole directory before the first publish, and fails when it cannot
//     read the directory at all (nothing is published then).
//   - A file with any problem (YAML syntax, unknown field, missing name) keeps the
//     resources of its last good version and is reported with its line.
//   - The directory vanishing or becoming unreadable keeps every resource and is
//     reported; the parent folder is watched (and the directory retried every Retry)
//     so the watch comes back with the directory.
//   - A resource defined in two files keeps the definition that is serving (the first
//     file in name order when neither is) and names both files in a problem.
//   - With a Memory, all of this holds across a restart too: the first read keeps
//     what served before it, not what happens to decode first.
//
// Wire it as:
//
//	src := &source.Dir{Path: dir, Log: log}
//	err := pipeline.New(pipeline.Options{...}).Run(ctx, src)
type Dir struct {
	Path string
	Log  zerolog.Logger
	// Debounce is how long the directory must stay quiet after an event before it is
	// read again, so an editor's burst of writes is read once (default
	// DefaultDebounce). It is added to every edit's latency.
	Debounce time.Duration
	// Retry is how often a vanished or unreadable directory is tried again (default 1s).
	Retry time.Duration
	// Memory, when set, is what served before this process started: at the first read,
	// a file that cannot be read or decoded takes its resources from it, and a resource
	// defined in two files keeps the definition it names.
	Memory Memory

	files map[string]*fileState // by path
	// troubled are the problems of each file whose last read had any (few files: a
	// map here rather than a field of every file's state).
	troubled map[string][]Problem
	// defs counts the definitions of each key over every file, by the key's
	// fingerprint (a uint64 rather than a Key's four strings); dups is the number of
	// fingerprints counted more than once. Two keys of one fingerprint would only count
	// as a duplicate: the next Input is then assembled from every file, which finds the
	// real duplicates.
	defs map[uint64]int32
	dups int
	// linked are the resource files that are symbolic links. Only through them can
	// another entry of the directory (a Kubernetes ..data swap, a symlinked folder)
	// change what is read; without them, an editor's temporary files cost nothing.
	linked map[string]bool
	// pageCache says whether the directory is on a filesystem where a short read of
	// a file is its end (shortReadIsEnd), as of its last listing.
	pageCache bool
	dirErr    error
	last      *Input
	// lastClean is true when last had neither a duplicate key nor a directory problem,
	// so the next Input may be made by editing it.
	lastClean bool
	watching  bool
}

// DefaultDebounce is Dir.Debounce's default: an editor's writes of one save come
// within microseconds of each other, and every millisecond of it is latency.
const DefaultDebounce = 10 * time.Millisecond

// fileState is what a file held the last time it was read (one per file: 48 bytes).
type fileState struct {
	sum       [16]byte   // of the content of the last good read (SHA-256's first half)
	resources []Resource // of the last good read
	troubled  bool       // the last read had problems (in Dir.troubled)
}

func (d *Dir) debounce() time.Duration {
	if d.Debounce > 0 {
		return d.Debounce
	}
	return DefaultDebounce
}

func (d *Dir) retry() time.Duration {
	if d.Retry > 0 {
		return d.Retry
	}
	return time.Second
}

// Run reads the directory, publishes the first Input, and then publishes again after
// every change that alters the Input, until ctx ends.
func (d *Dir) Run(ctx context.Context, publish func(*Input)) error {
	d.Path = filepath.Clean(d.Path)
	d.files = map[string]*fileState{}
	d.troubled = map[string][]Problem{}
	d.defs = map[uint64]int32{}
	// Watch before reading, so no change between the read and the watch is missed.
	w, err := d.startWatch()
	if err != nil {
		return err
	}
	defer w.Close()
	if _, _, err := d.scan(nil); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	d.publishIfChanged(nil, true, publish)
	return d.watch(ctx, w, publish)
}

// publishIfChanged publishes the Input after a scan (see next) if it changed.
func (d *Dir) publishIfChanged(changes []fileChange, all bool, publish func(*Input)) {
	in := d.next(changes, all)
	if in == nil {
		return
	}
	d.last = in
	d.Log.Info().Int("resources", in.Resources.Len()).Int("problems", len(in.Problems)).Str("dir", d.Path).Msg("resources read")
	for _, p := range in.Problems {
		d.Log.Warn().Str("problem", p.String()).Msg("resources: not read; what it held before keeps serving")
	}
	publish(in)
}
