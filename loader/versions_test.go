package loader_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

// Regression: the private copies of a server that crashed or was killed stayed in the
// temporary folder for good (2.1 GB after 200 reloads). RemoveStale removes the folders
// no live process holds, and leaves those in use.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, lockFile bool) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "abc.so"), []byte("copy"))
		if lockFile {
			write(t, filepath.Join(dir, ".lock"), nil)
		}
		return dir
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := strconv.Itoa(dead.Process.Pid)

	// A live server: a Loader that has made its copy (and so holds its folder's lock).
	live := filepath.Join(tmp, "gatehouse-plugins-999999991")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "x.so"), []byte("not a plugin"))
	l := loader.NewWithOptions(dir, loader.Options{PrivateDir: live, Trial: loader.TrialRunner{Executable: "/nonexistent"}})
	if _, err := l.Open("x.so", "Plugin"); err == nil {
		t.Fatal("Open of a text file succeeded")
	}

	crashed := mk("gatehouse-plugins-999999992", true)                      // lock file, not held
	older := mk("gatehouse-plugins-"+deadPID, false)                        // no lock file, process gone
	olderLive := mk("gatehouse-plugins-"+strconv.Itoa(os.Getppid()), false) // no lock file, process alive
	other := mk("something-else", false)

	removed, err := loader.RemoveStale(tmp)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	want := []string{older, crashed}
	sort.Strings(want)
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, keep := range []string{live, olderLive, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadedVersionsCountsNothingRefused(t *testing.T) {
	before := loader.LoadedVersions()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "x.so"), []byte("not a plugin"))
	l := loader.NewWithOptions(dir, loader.Options{PrivateDir: t.TempDir(), Trial: loader.TrialRunner{Executable: "/nonexistent"},
		Opened: func(string, string, int) { t.Errorf("Opened called for a refused file") }})
	if _, err := l.Open("x.so", "Plugin"); err == nil {
		t.Fatal("Open of a text file succeeded")
	}
	if got := loader.LoadedVersions(); got != before {
		t.Errorf("LoadedVersions = %d after a refusal, want %d", got, before)
	}
}

// Regression: a trial ahead of use still under way when the server stopped made the
// private folder again after Close had removed it, and it stayed behind. After Close,
// nothing is copied: the folder stays gone.
func TestCloseKeepsThePrivateFolderGone(t *testing.T) {
	plugins, private := t.TempDir(), filepath.Join(t.TempDir(), "private")
	write(t, filepath.Join(plugins, "late.so"), []byte("not yet trial-loaded"))
	l := loader.NewWithOptions(plugins, loader.Options{PrivateDir: private})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.TrialAhead("late.so") {
		t.Error("a trial ahead of use passed after Close")
	}
	if _, err := l.Open("late.so", "Plugin"); err == nil {
		t.Error("Open after Close succeeded")
	}
	if _, err := os.Stat(private); !os.IsNotExist(err) {
		t.Errorf("the private folder %s exists after Close (stat: %v)", private, err)
	}
}
