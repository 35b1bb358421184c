package loader_test

import (
	"strconv"
	"testing"

	"gatehouse.dev/gatehouse/loader"
)

func TestPluginErrorLists(t *testing.T) {
	goVersion := loader.Finding{Severity: "error", Check: "go version", Host: "go1.26.8", Plugin: "go1.25.0", Fix: "rebuild"}
	trim := loader.Finding{Severity: "error", Check: "-trimpath", Host: "false", Plugin: "true", Fix: "rebuild without -trimpath"}
	tags := loader.Finding{Severity: "warning", Check: "-tags", Plugin: "foo", Detail: "accepted by the runtime"}
	tests := []struct {
		name     string
		findings []loader.Finding
		want     string
	}{
		{
			name:     "one error, warnings left out",
			findings: []loader.Finding{tags, goVersion},
			want:     "loader: /auth-plugins/x.so: go version: host go1.26.8, plugin go1.25.0; fix: rebuild",
		},
		{
			name:     "several errors, one per line",
			findings: []loader.Finding{goVersion, tags, trim},
			want: "loader: /auth-plugins/x.so: 2 problems\n" +
				"\tgo version: host go1.26.8, plugin go1.25.0; fix: rebuild\n" +
				"\t-trimpath: host false, plugin true; fix: rebuild without -trimpath",
		},
		{
			name:     "a finding without values",
			findings: []loader.Finding{{Severity: "error", Check: "file", Detail: "empty file", Fix: "rebuild"}},
			want:     "loader: /auth-plugins/x.so: file: empty file; fix: rebuild",
		},
		{
			name:     "an empty value is shown as none",
			findings: []loader.Finding{{Severity: "error", Check: "GOEXPERIMENT", Plugin: "arenas"}},
			want:     "loader: /auth-plugins/x.so: GOEXPERIMENT: host (none), plugin arenas",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &loader.Error{File: "/auth-plugins/x.so", Findings: tt.findings}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
