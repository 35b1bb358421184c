package cases

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	yaml "go.yaml.in/yaml/v3"
)

// ReadStep reads the step file of `gatehouse plugin verify --config` and `plugin test
// --config`: a document with a top-level pluginAuth key (or a list of one, as the step
// appears under spec.configs) is a step, whose config and symbol (exportedSymbolName,
// defaulting to its name) are used; any other document is the config object itself.
// The config comes back as JSON.
func ReadStep(path string) (symbol string, config []byte, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	// A step copied from spec.configs with its "- " is a list of one step.
	if list, ok := doc.([]any); ok && len(list) == 1 {
		if m, ok := list[0].(map[string]any); ok && m["pluginAuth"] != nil {
			doc = m
		}
	}
	if m, ok := doc.(map[string]any); ok {
		if step, ok := m["pluginAuth"]; ok {
			sm, ok := step.(map[string]any)
			if !ok {
				return "", nil, fmt.Errorf("%s: pluginAuth must be a mapping", path)
			}
			symbol, _ = sm["exportedSymbolName"].(string)
			if name, _ := sm["name"].(string); symbol == "" {
				symbol = name
			}
			doc = sm["config"]
		}
	}
	if doc == nil {
		return symbol, nil, nil
	}
	config, err = json.Marshal(doc)
	if err != nil {
		return "", nil, errors.Join(fmt.Errorf("%s: the config cannot be expressed as JSON", path), err)
	}
	return symbol, config, nil
}
