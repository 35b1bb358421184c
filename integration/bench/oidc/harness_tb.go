package oidc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// harnessTB lets the bench use integration/harness, which is written for tests: Fatal
// and Fatalf end the function run by do with an error instead of ending a test, and
// Cleanup functions (the harness stops its processes by pid there) run on cleanup.
// The embedded testing.TB is nil; the harness calls no method but these.
type harnessTB struct {
	testing.TB
	dir string // parent of TempDir's folders

	mu       sync.Mutex
	cleanups []func()
}

// harnessFatal is the panic value Fatal and Fatalf unwind do with.
type harnessFatal struct{ msg string }

func (t *harnessTB) Helper() {}

func (t *harnessTB) Fatalf(format string, args ...any) {
	panic(harnessFatal{fmt.Sprintf(format, args...)})
}

func (t *harnessTB) Fatal(args ...any) { panic(harnessFatal{fmt.Sprint(args...)}) }

// Failed is false: testbin asks it when it stops a process, to log the process's
// output after a failed test; the bench keeps none (a failure ends do with an error).
func (t *harnessTB) Failed() bool { return false }

func (t *harnessTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *harnessTB) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "harness-")
	if err != nil {
		t.Fatalf("harness: temp dir: %v", err)
	}
	return d
}

// do runs f, turning a Fatal inside it into an error.
func (t *harnessTB) do(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			hf, ok := p.(harnessFatal)
			if !ok {
				panic(p)
			}
			err = errors.New(hf.msg)
		}
	}()
	f()
	return nil
}

// cleanup runs the Cleanup functions, last registered first. It may be called more
// than once.
func (t *harnessTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
