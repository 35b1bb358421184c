package cases_test

import (
	"os"
	"path/filepath"
	"testing"

	"gatehouse.dev/gatehouse/loader/cases"
)

func TestReadStepTakesAStepOrItsConfig(t *testing.T) {
	tests := []struct {
		name, yaml, symbol, config string
	}{
		{
			name:   "a step with its symbol",
			yaml:   "pluginAuth:\n  name: required_header\n  exportedSymbolName: Plugin\n  config:\n    RequiredHeader: x-required\n    AllowedValues: [alpha]\n",
			symbol: "Plugin",
			config: `{"AllowedValues":["alpha"],"RequiredHeader":"x-required"}`,
		},
		{
			name:   "a step without exportedSymbolName looks up its name",
			yaml:   "pluginAuth:\n  name: required_header\n  config: {A: 1}\n",
			symbol: "required_header",
			config: `{"A":1}`,
		},
		{
			name:   "a step without config",
			yaml:   "pluginAuth:\n  name: p\n",
			symbol: "p",
		},
		{
			// Regression: the step as docs/plugins.md shows it, copied from spec.configs
			// with its "- ", was taken for a config object (field "": got array).
			name:   "a step copied from spec.configs with its dash",
			yaml:   "- pluginAuth:\n    name: prefix\n    exportedSymbolName: Plugin\n    config: {Prefix: /api}\n",
			symbol: "Plugin",
			config: `{"Prefix":"/api"}`,
		},
		{
			name:   "just the config object",
			yaml:   "RequiredHeader: x-required\nNested: {config: 1}\n",
			config: `{"Nested":{"config":1},"RequiredHeader":"x-required"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "step.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			symbol, config, err := cases.ReadStep(path)
			if err != nil || symbol != tt.symbol || string(config) != tt.config {
				t.Errorf("ReadStep = %q, %s, %v; want %q, %s", symbol, config, err, tt.symbol, tt.config)
			}
		})
	}
}
