package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Go cannot unload a plugin: every version of a plugin file this process opened stays
// in memory (a few MB each) until the process ends. The loader counts them and says so,
// so an operator can see a hot-reload habit growing the process and roll it.

// LoadedVersions is how many plugin contents (distinct sha256) this process opened.
func LoadedVersions() int {
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	return len(loaded.byHash)
}

// privatePrefix names the private copy folders, "gatehouse-plugins-<pid>".
const privatePrefix = "gatehouse-plugins-"

// lockName is the file a live process holds locked in its private folder, so another
// process (in another PID namespace too) can tell whether the folder is still in use.
const lockName = ".lock"

// lockPrivateDir creates dir and takes its lock for the life of the process.
func (l *Loader) lockPrivateDir(dir string) error {
	l.dirMu.Lock()
	defer l.dirMu.Unlock()
	if l.closed {
		return errors.New("the loader is closed: no plugin is copied or opened any more")
	}
	l.lockOnce.Do(func() {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			l.lockErr = fmt.Errorf("creating the private plugin directory: %w", err)
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			l.lockErr = fmt.Errorf("locking the private plugin directory: %w", err)
			return
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			l.lockErr = fmt.Errorf("locking the private plugin directory %s: %w (is another server using it?)", dir, err)
			return
		}
		l.lock = f // held, and so locked, until the process ends
	})
	return l.lockErr
}

// RemoveStale removes the private copy folders under tmp that no live process uses:
// those left by a server that crashed or was killed (a clean stop removes its own). A
// folder is in use while its lock is held; one without a lock file (an older server)
// is judged by whether its process id is alive here. It returns what it removed.
func RemoveStale(tmp string) ([]string, error) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), privatePrefix))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), privatePrefix) || err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if inUse(dir, pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

func inUse(dir string, pid int) bool {
	f, err := os.Open(filepath.Join(dir, lockName))
	if err != nil {
		// No lock file: an older server's folder, in use if its process lives.
		return syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
