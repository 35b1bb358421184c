package v1

import yaml "go.yaml.in/yaml/v3"

// resolve follows aliases (*name) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// pairs returns a mapping's key and value nodes with "<<" merges expanded as decoding
// does: keys written in the mapping win over merged ones, and earlier merged mappings
// over later ones. Keys of merged entries keep their own lines, where they are written.
func pairs(m *yaml.Node) [][2]*yaml.Node {
	var own, merges [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		kv := [2]*yaml.Node{m.Content[i], m.Content[i+1]}
		if kv[0].Tag == "!!merge" {
			merges = append(merges, kv)
		} else {
			own = append(own, kv)
		}
	}
	if len(merges) == 0 {
		return own
	}
	seen := map[string]bool{}
	for _, kv := range own {
		seen[kv[0].Value] = true
	}
	for _, kv := range merges {
		from := []*yaml.Node{resolve(kv[1])}
		if from[0].Kind == yaml.SequenceNode {
			from = from[0].Content
		}
		for _, src := range from {
			if src = resolve(src); src.Kind != yaml.MappingNode {
				continue // decoding has already refused it
			}
			for _, mkv := range pairs(src) {
				if !seen[mkv[0].Value] {
					seen[mkv[0].Value] = true
					own = append(own, mkv)
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
	for _, kv := range pairs(m) {
		if kv[0].Value == key && kv[0].Tag == "!!str" {
			return kv[0], resolve(kv[1])
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
