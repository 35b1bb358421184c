package loader

import (
	"fmt"
	"strings"
)

// String is the diagnosis as `gatehouse plugin verify` prints it: a line saying
// whether the file loads, with its error and warning counts, then one indented line
// per finding, errors first, and why the trial load was skipped, if it was.
func (d *Diagnosis) String() string {
	errs, warns := Errors(d.Findings), Warnings(d.Findings)
	var b strings.Builder
	if d.OK {
		fmt.Fprintf(&b, "%s: loads", d.File)
		if d.Trial != nil {
			fmt.Fprintf(&b, " (symbol %s: %s, config %s)", d.Symbol, d.Trial.SymbolType, d.Trial.ConfigType)
		}
	} else {
		fmt.Fprintf(&b, "%s: refused, %d %s", d.File, len(errs), plural(len(errs), "error", "errors"))
	}
	if len(warns) > 0 {
		fmt.Fprintf(&b, ", %d %s", len(warns), plural(len(warns), "warning", "warnings"))
	}
	b.WriteString("\n")
	for _, f := range append(errs, warns...) {
		fmt.Fprintf(&b, "  %-7s %s\n", f.Severity, strings.ReplaceAll(f.String(), "\n", "\n          "))
	}
	if d.TrialSkipped != "" {
		fmt.Fprintf(&b, "  trial load skipped: %s\n", d.TrialSkipped)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
