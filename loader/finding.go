package loader

import (
	"fmt"
	"strings"
)

// Severity says whether a Finding stops a plugin from loading.
type Severity string

const (
	// SeverityError findings refuse the plugin: opening it would fail, crash or hang.
	SeverityError Severity = "error"
	// SeverityWarning findings are differences the runtime accepts.
	SeverityWarning Severity = "warning"
)

// Finding is one difference between a plugin and the host it is loaded into, or one
// failure of the trial load.
type Finding struct {
	Severity Severity `json:"severity"`
	// Check names what was compared: "go version", "-trimpath", "module golang.org/x/text".
	Check string `json:"check"`
	// Host and Plugin are the two values that differ, when there are two.
	Host   string `json:"host,omitempty"`
	Plugin string `json:"plugin,omitempty"`
	// Detail explains a finding that is not a pair of values, or adds to one that is.
	Detail string `json:"detail,omitempty"`
	// Fix is what to do about it, usually a command.
	Fix string `json:"fix,omitempty"`
}

// String is the finding on one line: "check: host X, plugin Y; detail; fix: Z".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Check)
	b.WriteString(": ")
	parts := make([]string, 0, 3)
	if f.Host != "" || f.Plugin != "" {
		parts = append(parts, fmt.Sprintf("host %s, plugin %s", orNone(f.Host), orNone(f.Plugin)))
	}
	if f.Detail != "" {
		parts = append(parts, f.Detail)
	}
	if f.Fix != "" {
		parts = append(parts, "fix: "+f.Fix)
	}
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func errorf(check, host, plugin, fix string) Finding {
	return Finding{Severity: SeverityError, Check: check, Host: host, Plugin: plugin, Fix: fix}
}

func warnf(check, host, plugin, detail string) Finding {
	return Finding{Severity: SeverityWarning, Check: check, Host: host, Plugin: plugin, Detail: detail}
}

// Errors returns the findings that refuse the plugin.
func Errors(fs []Finding) []Finding { return bySeverity(fs, SeverityError) }

// Warnings returns the findings the runtime accepts.
func Warnings(fs []Finding) []Finding { return bySeverity(fs, SeverityWarning) }

func bySeverity(fs []Finding, s Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == s {
			out = append(out, f)
		}
	}
	return out
}

// Error is a refused plugin: every error finding of its pre-flight and trial load.
type Error struct {
	// File is the plugin file as the user named it.
	File     string
	Findings []Finding
}

// Error lists every problem, one per line after the first when there are several.
func (e *Error) Error() string {
	errs := Errors(e.Findings)
	switch len(errs) {
	case 0:
		return fmt.Sprintf("loader: %s: plugin refused", e.File)
	case 1:
		return fmt.Sprintf("loader: %s: %s", e.File, errs[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "loader: %s: %d problems", e.File, len(errs))
	for _, f := range errs {
		b.WriteString("\n\t")
		b.WriteString(f.String())
	}
	return b.String()
}
