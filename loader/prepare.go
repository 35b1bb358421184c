package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// Prepare checks file for symbol as Open does (pre-flight and trial load, on a private
// copy named by its content) without opening it in this process, and returns the
// copy's path: what a process-isolated worker opens.
func (l *Loader) Prepare(file, symbol string) (string, error) {
	path, err := l.Path(file)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("loader: %s: no such plugin file; is the plugin image's init container copying it into %s?", path, l.dir)
		}
		return "", fmt.Errorf("loader: %w", err)
	}
	sum := sha256.Sum256(data)
	copyPath, err := l.writeCopy(hex.EncodeToString(sum[:]), data)
	if err != nil {
		return "", fmt.Errorf("loader: %s: %w", path, err)
	}
	// No check against the plugins this process opened: the worker is a process of
	// its own.
	_, findings := l.check.Preflight(copyPath)
	if len(Errors(findings)) > 0 {
		return "", &Error{File: path, Findings: findings}
	}
	trial, _ := l.check.Trial.Run(context.Background(), path, copyPath, symbol, nil, false)
	l.startSpare()
	if len(Errors(trial)) > 0 {
		return "", &Error{File: path, Findings: append(findings, trial...)}
	}
	if l.opts.Warn != nil && len(Warnings(findings)) > 0 {
		l.opts.Warn(path, Warnings(findings))
	}
	return copyPath, nil
}

// StartWorker checks file (Prepare) and starts a process-isolated worker running its
// symbol with config. memoryLimit (bytes, 0: none) caps the worker's resident memory.
func (l *Loader) StartWorker(file, symbol string, config []byte, memoryLimit int64) (*Worker, error) {
	copyPath, err := l.Prepare(file, symbol)
	if err != nil {
		return nil, err
	}
	path, _ := l.Path(file)
	return StartWorker(WorkerOptions{Executable: l.opts.Trial.Executable, File: copyPath, Display: path,
		Symbol: symbol, Config: config, MemoryLimit: memoryLimit, Log: l.opts.Log})
}
