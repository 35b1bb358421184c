package testbin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrapRemovesTempDirs(t *testing.T) {
	var dir string
	code := Wrap(func() int {
		dir = TempDir(t, "testbin-test-")
		if err := os.WriteFile(filepath.Join(dir, "gatehouse"), []byte("binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		return 3
	})
	if code != 3 {
		t.Errorf("Wrap returned %d, want run's 3", code)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after Wrap: %v, want it removed", dir, err)
	}
}

func TestTempDirNeedsMain(t *testing.T) {
	temps.mu.Lock()
	saved := temps.wrapped
	temps.wrapped = false
	temps.mu.Unlock()
	defer func() {
		temps.mu.Lock()
		temps.wrapped = saved
		temps.mu.Unlock()
	}()
	_, err := tempDir("testbin-test-")
	if err == nil || !strings.Contains(err.Error(), "os.Exit(testbin.Main(m))") {
		t.Fatalf("tempDir without Main: %v, want an error that says what to add", err)
	}
}
