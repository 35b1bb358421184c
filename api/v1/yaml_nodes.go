package v1

import yaml "go.yaml.in/yaml/v3"

// resolve follows aliases (*name) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// pairs returns a mapping's keys and values, alternating, with "<<" merges expanded as
// decoding does: keys written in the mapping win over merged ones, and earlier merged
// mappings over later ones. Keys of merged entries keep their own lines, where they are
// written. Without merges it is m.Content itself (not to be modified).
func pairs(m *yaml.Node) []*yaml.Node {
	merged := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		merged = merged || m.Content[i].Tag == "!!merge"
	}
	if !merged {
		return m.Content
	}
	var own, merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Tag == "!!merge" {
			merges = append(merges, m.Content[i], m.Content[i+1])
		} else {
			own = append(own, m.Content[i], m.Content[i+1])
		}
	}
	seen := map[string]bool{}
	for i := 0; i < len(own); i += 2 {
		seen[own[i].Value] = true
	}
	for i := 1; i < len(merges); i += 2 {
		from := []*yaml.Node{resolve(merges[i])}
		if from[0].Kind == yaml.SequenceNode {
			from = from[0].Content
		}
		for _, src := range from {
			if src = resolve(src); src.Kind != yaml.MappingNode {
				continue // decoding has already refused it
			}
			kvs := pairs(src)
			for j := 0; j+1 < len(kvs); j += 2 {
				if !seen[kvs[j].Value] {
					seen[kvs[j].Value] = true
					own = append(own, kvs[j], kvs[j+1])
				}
			}
		}
	}
	return own
}

// lookup returns the key and (resolved) value nodes of key in mapping m, or nils.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil {
		return nil, nil
	}
	if m = resolve(m); m.Kind != yaml.MappingNode {
		return nil, nil
	}
	kvs := pairs(m)
	for i := 0; i+1 < len(kvs); i += 2 {
		if kvs[i].Value == key && kvs[i].Tag == "!!str" {
			return kvs[i], resolve(kvs[i+1])
		}
	}
	return nil, nil
}

// isNull says whether n is absent (nil) or null (~, null or nothing after the colon).
func isNull(n *yaml.Node) bool {
	if n == nil {
		return true
	}
	n = resolve(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// stringValue is the value of a string scalar, and whether n is one.
func stringValue(n *yaml.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	if n = resolve(n); n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", false
	}
	return n.Value, true
}
