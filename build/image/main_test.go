package image_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Real artifacts, built once by TestMain: the static copier, the same copier for arm64,
// and the sample plugin.
var copier, copierARM64, plugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "image-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := buildArtifacts(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildArtifacts(dir string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	copier = filepath.Join(dir, "gatehouse-plugin-copier")
	copierARM64 = filepath.Join(dir, "gatehouse-plugin-copier-arm64")
	plugin = filepath.Join(dir, "required_header.so")
	builds := []struct {
		env  []string
		args []string
	}{
		{[]string{"CGO_ENABLED=0"}, []string{"build", "-o", copier, "./images/copier"}},
		{[]string{"CGO_ENABLED=0", "GOARCH=arm64"}, []string{"build", "-o", copierARM64, "./images/copier"}},
		{[]string{"CGO_ENABLED=1"}, []string{"build", "-buildmode=plugin", "-o", plugin, "./plugins/required_header"}},
	}
	for _, b := range builds {
		cmd := exec.Command("go", b.args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(b.args, " "), err, out)
		}
	}
	return nil
}

// repoRoot walks up from the working directory to the folder holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
