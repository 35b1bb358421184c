package v1

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Limits on what one source may hold. A resource past them is refused with the limit in
// the message: decoding YAML takes many times its size in memory, and a chain of
// hundreds of steps or a step config of millions of entries is a mistake or an attack.
const (
	// MaxFileBytes bounds one resource file (and one Set.Add). A Kubernetes ConfigMap
	// holds at most 1 MiB.
	MaxFileBytes = 4 << 20
	// MaxSteps bounds the steps of one AuthConfig (spec.configs).
	MaxSteps = 64
	// MaxConfigEntries bounds the YAML nodes (mapping keys and values, list items,
	// scalars) of one step's pluginAuth.config.
	MaxConfigEntries = 10000
	// MaxDepth bounds how deeply collections nest in one document, in block and flow
	// style alike. Resources nest a dozen levels; deeper is a mistake or an attack
	// (a file of "[[[[..." nested millions deep ran parsers out of stack).
	MaxDepth = 256
)

// errTooDeep is a document nested past MaxDepth.
var errTooDeep = fmt.Errorf("collections nested more than %d deep; no resource nests so deeply", MaxDepth)

// tooDeep says whether collections nest under n past MaxDepth, and the line of the
// first that does. It walks with a stack of its own, so no input can exhaust the
// goroutine's.
func tooDeep(n *yaml.Node) (bool, int) {
	type at struct {
		n     *yaml.Node
		depth int
	}
	stack := []at{{n, 0}}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d := top.depth
		if top.n.Kind == yaml.SequenceNode || top.n.Kind == yaml.MappingNode {
			d++
		}
		if d > MaxDepth {
			return true, top.n.Line
		}
		for _, c := range top.n.Content {
			stack = append(stack, at{c, d})
		}
	}
	return false, 0
}

// checkSize refuses data past MaxFileBytes before it is decoded.
func checkSize(source string, size int64) error {
	if size > MaxFileBytes {
		return fmt.Errorf("%s: %d bytes, more than the %d (%d MiB) a resource file may hold; split it into several files",
			source, size, MaxFileBytes, MaxFileBytes>>20)
	}
	return nil
}

// authConfigLimits checks the steps of an AuthConfig document and the size of each
// step's plugin config, with field paths and lines.
func authConfigLimits(root *yaml.Node) []fieldError {
	_, spec := lookup(root, "spec")
	_, configs := lookup(spec, "configs")
	if configs == nil || configs.Kind != yaml.SequenceNode {
		return nil
	}
	var errs []fieldError
	if n := len(configs.Content); n > MaxSteps {
		errs = append(errs, fieldError{line: configs.Line, path: "spec.configs",
			msg: fmt.Sprintf("%d steps, more than the %d an AuthConfig may have", n, MaxSteps)})
	}
	for i, step := range configs.Content {
		_, pa := lookup(step, "pluginAuth")
		_, cfg := lookup(pa, "config")
		if cfg == nil {
			continue
		}
		if n := countNodes(cfg, MaxConfigEntries+1); n > MaxConfigEntries {
			errs = append(errs, fieldError{line: cfg.Line, path: fmt.Sprintf("spec.configs[%d].pluginAuth.config", i),
				msg: fmt.Sprintf("more than the %d entries a step config may hold", MaxConfigEntries)})
		}
	}
	return errs
}

// countNodes counts n and the nodes under it, following aliases, and stops at most.
func countNodes(n *yaml.Node, most int) int {
	count := 0
	var walk func(*yaml.Node, int)
	walk = func(n *yaml.Node, depth int) {
		if count >= most || depth > 100 {
			count = most
			return
		}
		count++
		for _, c := range resolve(n).Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return count
}
