//go:build !unix

package v1

import (
	"fmt"
	"os"
)

// ReadFile reads the resource file path: a regular file of at most MaxFileBytes.
func ReadFile(path string, buf []byte) ([]byte, error) { return ReadFileShort(path, buf, false) }

// ReadFileShort is ReadFile.
func ReadFileShort(path string, _ []byte, _ bool) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; only regular files are read", path)
	}
	if err := checkSize(path, fi.Size()); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
