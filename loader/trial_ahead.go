package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
)

// TrialAhead runs the slow part of opening file's current content, its trial load in a
// child, ahead of the first config that names it, so that config waits only for the
// pre-flight and plugin.Open. extauth does so for every plugin file it finds once its
// first config is built, and for every file that appears or changes while no config
// names it.
//
// The trial is run with the symbol a config would most likely name: Plugin when the
// plugin exports it, or else its only export. A pass is remembered for that content
// and symbol; Open of another symbol runs its own trial as before. A trial that fails
// is handed, once, to the next Open of that content and symbol, which reports it as the
// result of its own trial rather than running the same trial again (a plugin whose
// init hangs would otherwise cost two timeouts). TrialAhead opens nothing in this
// process and remembers no refusal of its own, so whatever it finds, what Open later
// does and reports is what it would have done and reported without it. It returns
// whether a trial passed and was remembered.
func (l *Loader) TrialAhead(file string) bool {
	path, err := l.Path(file)
	if err != nil {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	raw := sha256.Sum256(data)
	sum := hex.EncodeToString(raw[:])
	if openedContent(sum) != nil {
		return false // opened already: Open looks symbols up in this process
	}
	// Taken as Open takes it, so an Open of the same content meanwhile waits for the
	// trial and finds it remembered instead of running a second one.
	if !l.beginContent(sum) {
		return false
	}
	defer l.endContent(sum)
	copyPath, err := l.writeCopy(sum, data)
	if err != nil {
		return false
	}
	pf, findings := l.check.Preflight(copyPath)
	if pf == nil || len(Errors(findings)) > 0 {
		return false // Open refuses it, and says why
	}
	symbol := likelySymbol(pf.Exports)
	if symbol == "" || l.trialPassed(sum, symbol) {
		return false
	}
	trial, res := l.check.Trial.Run(context.Background(), path, copyPath, symbol, nil, false)
	l.startSpare() // the trial took the spare child, if there was one
	if len(Errors(trial)) > 0 {
		l.mu.Lock()
		l.failedAhead[trialKey{sum, symbol}] = trialOutcomeOf{path, trial, res}
		l.mu.Unlock()
		return false
	}
	l.mu.Lock()
	l.trialled[trialKey{sum, symbol}] = true
	l.mu.Unlock()
	return true
}

// likelySymbol is the symbol a plugin exporting exports is most likely named by.
func likelySymbol(exports []string) string {
	switch {
	case slices.Contains(exports, "Plugin"):
		return "Plugin"
	case len(exports) == 1:
		return exports[0]
	}
	return ""
}

// trialKey is content (sha256) trial-loaded with a symbol.
type trialKey struct{ sum, symbol string }

// trialOutcomeOf is what a trial load ahead of use found, when it failed: its
// findings name path.
type trialOutcomeOf struct {
	path     string
	findings []Finding
	res      *TrialResult
}

// takeFailedAhead is the failed trial of content sum with symbol run ahead of use for
// path, if any, taken so that it serves one Open.
func (l *Loader) takeFailedAhead(path, sum, symbol string) (trialOutcomeOf, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.failedAhead[trialKey{sum, symbol}]
	delete(l.failedAhead, trialKey{sum, symbol})
	return o, ok && o.path == path
}

// trialPassed says whether content sum is known to pass its trial load with symbol:
// run ahead here (TrialAhead), or checked by the caller (Options.TrialPassed).
func (l *Loader) trialPassed(sum, symbol string) bool {
	l.mu.Lock()
	passed := l.trialled[trialKey{sum, symbol}]
	l.mu.Unlock()
	return passed || l.opts.TrialPassed != nil && l.opts.TrialPassed(sum, symbol)
}

// TrialAheadInBackground runs TrialAhead for files, one at a time, in a goroutine of its own that
// follows any batch handed before, and logs each trial load remembered. It returns at
// once.
func (l *Loader) TrialAheadInBackground(files []string) {
	if len(files) == 0 {
		return
	}
	files = slices.Clone(files)
	go func() {
		l.preparing.Lock()
		defer l.preparing.Unlock()
		for _, file := range files {
			if l.TrialAhead(file) {
				l.opts.Log.Info().Str("file", file).Msg("plugin trial-loaded ahead of its first use")
			}
		}
	}()
}
