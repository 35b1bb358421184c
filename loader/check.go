package loader

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Checker runs the checks a plugin file passes before a serving process opens it: the
// pre-flight comparison with the host contract, then a trial load in a child process.
// `gatehouse plugin verify` and Loader.Open run the same Checker.
type Checker struct {
	// Contract is what plugins are compared with; nil means HostContract().
	Contract *Contract
	Trial    TrialRunner
}

// Diagnosis is the outcome of checking one plugin file.
type Diagnosis struct {
	File       string `json:"file"`
	Symbol     string `json:"symbol"`
	OK         bool   `json:"ok"`
	PluginPath string `json:"pluginPath,omitempty"`
	// Findings holds every pre-flight difference and trial-load failure.
	Findings []Finding    `json:"findings"`
	Trial    *TrialResult `json:"trial,omitempty"`
	// TrialSkipped says why there was no trial load.
	TrialSkipped string `json:"trialSkipped,omitempty"`
}

// Err is nil when the plugin loads, and otherwise an *Error with every reason.
func (d *Diagnosis) Err() error {
	if len(Errors(d.Findings)) == 0 {
		return nil
	}
	return &Error{File: d.File, Findings: d.Findings}
}

func (c *Checker) contract() (*Contract, error) {
	if c.Contract != nil {
		return c.Contract, nil
	}
	return HostContract()
}

// Preflight reads path and compares it with the contract. display is the file name
// messages use.
func (c *Checker) Preflight(path string) (*PluginFile, []Finding) {
	pf, bad := ReadPluginFile(path)
	if bad != nil {
		return nil, []Finding{*bad}
	}
	ct, err := c.contract()
	if err != nil {
		return pf, []Finding{{Severity: SeverityError, Check: "host contract", Detail: err.Error()}}
	}
	return pf, Preflight(ct, pf)
}

// Check runs the pre-flight and, when it finds no error, the trial load. With
// withConfig the trial also decodes config into the plugin's config type and calls
// GetAuthService. display names the file in messages; path is the file checked.
func (c *Checker) Check(ctx context.Context, display, path, symbol string, config []byte, withConfig bool) *Diagnosis {
	d := &Diagnosis{File: display, Symbol: symbol}
	pf, findings := c.Preflight(path)
	d.Findings = findings
	if pf != nil {
		d.PluginPath = pf.PluginPath
	}
	if len(Errors(findings)) > 0 {
		d.TrialSkipped = "the pre-flight found errors, so the plugin is not opened"
		return d
	}
	trial, res := c.Trial.Run(ctx, display, path, symbol, config, withConfig)
	d.Trial = res
	d.Findings = append(d.Findings, withExports(trial, pf)...)
	d.OK = len(Errors(d.Findings)) == 0
	if d.Findings == nil {
		d.Findings = []Finding{}
	}
	return d
}

// unexportableSymbol is the symbol of an unexportableProblem detail.
func unexportableSymbol(detail string) (string, bool) {
	rest, ok := strings.CutPrefix(detail, "no exported symbol ")
	if !ok {
		return "", false
	}
	quoted, _, ok := strings.Cut(rest, ":")
	symbol, err := strconv.Unquote(quoted)
	if !ok || err != nil || Exportable(symbol) {
		return "", false
	}
	return symbol, true
}

// withExports adds the names a plugin does export to a missing-symbol finding.
func withExports(fs []Finding, pf *PluginFile) []Finding {
	if pf == nil || len(pf.Exports) == 0 {
		return fs
	}
	for i, f := range fs {
		if f.Check == "trial load ("+StageLookup+")" && strings.HasPrefix(f.Detail, "no exported symbol") {
			fs[i].Detail += fmt.Sprintf(" (it exports %s)", strings.Join(pf.Exports, ", "))
			if symbol, ok := unexportableSymbol(f.Detail); ok {
				fs[i].Fix = unexportableFix(symbol, pf.Exports)
			}
		}
	}
	return fs
}
