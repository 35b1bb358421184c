package loader_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

// TestDiagnosisReadsAsVerifyPrintsIt: a file that loads says so with its symbol and
// config types; a refused one counts its errors and warnings, lists errors before
// warnings with continuation lines indented, and says why the trial was skipped.
func TestDiagnosisReadsAsVerifyPrintsIt(t *testing.T) {
	warn := loader.Finding{Severity: loader.SeverityWarning, Check: "module golang.org/x/text", Host: "v0.1.0", Plugin: "v0.2.0"}
	for _, c := range []struct {
		name string
		d    loader.Diagnosis
		want string
	}{
		{"loads", loader.Diagnosis{File: "p.so", Symbol: "Plugin", OK: true, Trial: &loader.TrialResult{OK: true, SymbolType: "*main.P", ConfigType: "*main.Config"}},
			"p.so: loads (symbol Plugin: *main.P, config *main.Config)\n"},
		{"refused", loader.Diagnosis{File: "p.so", Findings: []loader.Finding{warn,
			{Severity: loader.SeverityError, Check: "go version", Host: "go1.26.8", Plugin: "go1.25.0", Detail: "two\nlines"}}, TrialSkipped: "pre-flight failed"},
			"p.so: refused, 1 error, 1 warning\n" +
				"  error   go version: host go1.26.8, plugin go1.25.0; two\n          lines\n" +
				"  warning module golang.org/x/text: host v0.1.0, plugin v0.2.0\n" +
				"  trial load skipped: pre-flight failed\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, c.d.String()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
