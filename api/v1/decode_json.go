package v1

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// freeFormJSON is what the JSON round trip makes of a free-form value (a plugin's
// config): yaml.v3 decodes it into generic values and encoding/json marshals them.
// appendJSON writes those bytes straight from the nodes for what plugin configs hold
// (string-keyed mappings, sequences, strings, canonical integers, booleans, null);
// anything else (floats, timestamps, aliases, odd integer forms) takes the round trip.
func freeFormJSON(n *yaml.Node) ([]byte, bool) {
	if b, ok := appendJSON(nil, n); ok {
		return b, true
	}
	var g any
	if n.Decode(&g) != nil {
		return nil, false
	}
	b, err := json.Marshal(g)
	return b, err == nil
}

func appendJSON(b []byte, n *yaml.Node) ([]byte, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		return appendJSONScalar(b, n)
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, item := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, item); !ok {
				return nil, false
			}
		}
		return append(b, ']'), true
	case yaml.MappingNode:
		// encoding/json writes a map's keys in sorted order.
		pairs := make([]int, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				return nil, false // a merge key, or a key the generic decode does not make a string
			}
			pairs = append(pairs, i)
		}
		slices.SortFunc(pairs, func(i, j int) int { return strings.Compare(n.Content[i].Value, n.Content[j].Value) })
		b = append(b, '{')
		for p, i := range pairs {
			if p > 0 {
				if n.Content[pairs[p-1]].Value == n.Content[i].Value {
					return nil, false // a duplicate key: the decode refuses it
				}
				b = append(b, ',')
			}
			b = appendJSONString(b, n.Content[i].Value)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSON(b, n.Content[i+1]); !ok {
				return nil, false
			}
		}
		return append(b, '}'), true
	}
	return nil, false
}

func appendJSONScalar(b []byte, n *yaml.Node) ([]byte, bool) {
	switch n.Tag {
	case "!!str":
		return appendJSONString(b, n.Value), true
	case "!!null":
		return append(b, "null"...), true
	case "!!bool":
		switch n.Value {
		case "true", "True", "TRUE":
			return append(b, "true"...), true
		case "false", "False", "FALSE":
			return append(b, "false"...), true
		}
	case "!!int":
		// Only the canonical decimal form, which decodes to an int and marshals back to
		// the same digits; 0x1f, 0o17, +1, 1_000 and overflowing values take the round trip.
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil && strconv.FormatInt(i, 10) == n.Value {
			return append(b, n.Value...), true
		}
	}
	return nil, false
}

// appendJSONString writes s as encoding/json does: plain printable ASCII as it is,
// anything that needs escaping (quotes, backslashes, <, >, &, control and non-ASCII
// characters) through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
