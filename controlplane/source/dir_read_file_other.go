//go:build !unix

package source

import "os"

// fileReader reads whole files (with os.ReadFile where there is no unix read).
type fileReader struct{}

func (*fileReader) read(path string, _ bool) ([]byte, error) { return os.ReadFile(path) }
