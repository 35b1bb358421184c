package loader

import (
	"os"
	"sync"
	"syscall"
)

// fileID is what identifies a file's content without reading it: its inode, size and
// change times. A plugin file replaced or rewritten gets another one.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, true
}

// sums remembers the sha256 of each plugin file by path and fileID, so that building
// thousands of AuthConfigs on one plugin reads and hashes the file once, not once per
// config.
type sums struct {
	mu sync.Mutex
	m  map[string]sumEntry
}

type sumEntry struct {
	id  fileID
	sum string
}

func (s *sums) get(path string, id fileID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[path]
	return e.sum, ok && e.id == id
}

func (s *sums) put(path string, id fileID, sum string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sumEntry{}
	}
	s.m[path] = sumEntry{id: id, sum: sum}
}
