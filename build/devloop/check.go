package devloop

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"

	"gatehouse.dev/gatehouse/loader"
)

// checker runs a server's checks on each build before it is published: the pre-flight
// (loader.Preflight) and a trial load in a child process.
//
// The pre-flight judges what the toolchain, the build settings and the module graph
// decide: Go release, settings, module versions, package hashes, libc. Its verdict is
// kept while go.mod, go.sum and the build's Go version and settings stay as they were
// when it passed; a save of code alone cannot change those. The trial load runs on
// every build, since the plugin's own code (its init, its symbol) is what a save
// changes, and it is the runtime's check of everything the kept pre-flight judged
// (plugin.Open refuses packages that differ). A trial that fails after a kept
// pre-flight is followed by the full check, so the diagnosis names every reason.
type checker struct {
	symbol string
	ch     loader.Checker
	// kept is the key of the last pre-flight that passed; empty when none did.
	kept string
}

// newChecker checks against the contract c (nil: this binary's) with trial loads in
// children of runner's executable, each started ahead of the check it serves.
func newChecker(c *loader.Contract, runner loader.TrialRunner, symbol string) *checker {
	if runner.Spare == nil {
		runner.Spare = &loader.TrialSpare{}
	}
	return &checker{symbol: symbol, ch: loader.Checker{Contract: c, Trial: runner}}
}

// prepare starts the trial child the next check uses, so its start overlaps the build.
func (c *checker) prepare() error {
	return c.ch.Trial.Spare.Start(c.ch.Trial)
}

// close ends the waiting trial child.
func (c *checker) close() { c.ch.Trial.Spare.Close() }

// check checks the build at path, whose go.mod and go.sum hash to mod. preflight says
// whether the pre-flight ran (false: kept from an earlier build with the same key).
func (c *checker) check(ctx context.Context, path string, mod [sha256.Size]byte) (d *loader.Diagnosis, preflight bool) {
	key, err := preflightKey(path, mod)
	if err == nil && key == c.kept {
		findings, res := c.ch.Trial.Run(ctx, path, path, c.symbol, nil, false)
		if len(loader.Errors(findings)) == 0 {
			return &loader.Diagnosis{File: path, Symbol: c.symbol, OK: true, Findings: findings, Trial: res}, false
		}
	}
	d = c.ch.Check(ctx, path, path, c.symbol, nil, false)
	c.kept = ""
	if err == nil && d.OK {
		c.kept = key
	}
	return d, true
}

// preflightKey is what a pre-flight verdict depends on beyond the plugin's own code:
// go.mod and go.sum (the module graph, the toolchain line) and the Go version and build
// settings the file records.
func preflightKey(path string, mod [sha256.Size]byte) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the build information of %s: %w", path, err)
	}
	h := sha256.New()
	h.Write(mod[:])
	fmt.Fprintf(h, "%s\n", bi.GoVersion)
	for _, s := range bi.Settings {
		fmt.Fprintf(h, "%s=%s\n", s.Key, s.Value)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
