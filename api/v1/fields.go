package v1

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// fieldError is one problem with a field of a document: a name the resource type does
// not have or a value of the wrong type. Path uses the YAML's names
// (spec.configs[0].pluginAuth); line is where the field is written.
type fieldError struct {
	line int
	path string
	msg  string
}

func (e fieldError) Error() string { return e.path + ": " + e.msg }

// checkFields walks a document's node tree against the Go type it decodes into and
// returns every unknown field and type mismatch, so that one run shows them all with
// their paths rather than encoding/json's first, pathless error. It follows what
// encoding/json would accept, except that field names must match exactly (json also
// takes other cases) and dates must be quoted where a string is wanted (json would
// take the date rewritten as RFC 3339).
func checkFields(root *yaml.Node, t reflect.Type) []fieldError {
	var steps [16]pathStep // deeper than any resource nests; append grows past it
	c := checker{at: steps[:0]}
	c.check(root, infoOf(t), root.Line)
	return c.errs
}

// checker keeps the path to the value being checked as steps, made into a string
// ("spec.virtualHost.routes[1].matchers[0]") only for an error, so checking a
// document allocates no path for the fields that are right.
type checker struct {
	errs []fieldError
	at   []pathStep
}

// pathStep is a mapping key, or a list item's index.
type pathStep struct {
	key   string
	index int // -1 for a key
}

func (c *checker) push(key string, index int) { c.at = append(c.at, pathStep{key, index}) }
func (c *checker) pop()                       { c.at = c.at[:len(c.at)-1] }

// path is where the value being checked is.
func (c *checker) path() string {
	p := ""
	for _, s := range c.at {
		if s.index >= 0 {
			p += "[" + strconv.Itoa(s.index) + "]"
		} else {
			p = join(p, s.key)
		}
	}
	return p
}

// fail reports a problem of the value being checked.
func (c *checker) fail(line int, format string, args ...any) {
	c.errs = append(c.errs, fieldError{line: line, path: c.path(), msg: fmt.Sprintf(format, args...)})
}

func (c *checker) wrongType(n *yaml.Node, line int, want string) {
	c.fail(line, "want %s, got %s", want, describe(n))
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// check reports the problems of n as a value of the type ti describes; line is that
// of the field (the key for a mapping entry, the item for a list entry).
func (c *checker) check(n *yaml.Node, ti *typeInfo, line int) {
	if isNull(n) {
		return // null leaves any field at its zero value
	}
	n = resolve(n)
	t := ti.t
	if ti.freeForm {
		// Free-form, such as a plugin's config (json.RawMessage), which is checked later
		// against the plugin's own type; only what JSON cannot hold is reported here.
		c.checkKeys(n)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.check(n, ti.elem, line)
	case reflect.Struct:
		c.checkStruct(n, ti, line)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.wrongType(n, line, "a mapping")
			return
		}
		kvs := pairs(n)
		for i := 0; i+1 < len(kvs); i += 2 {
			k := kvs[i]
			c.push(k.Value, -1)
			if k.Tag != "!!str" {
				c.fail(k.Line, "key is %s; quote it to make it a string", describe(k))
			} else {
				c.check(kvs[i+1], ti.elem, k.Line)
			}
			c.pop()
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			c.checkBase64(n, line)
			return
		}
		if n.Kind != yaml.SequenceNode {
			c.wrongType(n, line, "a list")
			return
		}
		for i, item := range n.Content {
			c.push("", i)
			c.check(item, ti.elem, item.Line)
			c.pop()
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!int" || n.Tag == "!!float" || n.Tag == "!!bool" {
			c.wrongType(n, line, "a string")
		} else if n.Tag == "!!timestamp" {
			c.fail(line, "want a string, got a date; quote it")
		}
	case reflect.Bool:
		if n.Tag != "!!bool" {
			c.wrongType(n, line, "a boolean (true or false)")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if msg := checkInteger(n, t); msg != "" {
			c.fail(line, "want an integer, got %s", msg)
		}
	case reflect.Float32, reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			c.wrongType(n, line, "a number")
		}
	}
}

func (c *checker) checkStruct(n *yaml.Node, ti *typeInfo, line int) {
	if n.Kind != yaml.MappingNode {
		c.wrongType(n, line, "a mapping")
		return
	}
	kvs := pairs(n)
	for i := 0; i+1 < len(kvs); i += 2 {
		k := kvs[i]
		f, ok := ti.fields[k.Value]
		c.push(k.Value, -1)
		if !ok || k.Tag != "!!str" {
			msg := "unknown field"
			if s := suggest(k.Value, ti.fieldTypes); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			c.fail(k.Line, "%s", msg)
		} else {
			c.check(kvs[i+1], f.info, k.Line)
		}
		c.pop()
	}
}

// checkBase64 checks a []byte field, which JSON (and so YAML here) writes as base64.
// The value may be a secret: the error gives the position, never the text.
func (c *checker) checkBase64(n *yaml.Node, line int) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		c.wrongType(n, line, "a base64 string")
		return
	}
	if _, err := base64.StdEncoding.DecodeString(n.Value); err != nil {
		c.fail(line, "want a base64 string: %v", err)
	}
}

// checkKeys reports what JSON cannot hold in free-form content: keys that are not
// strings, infinity and NaN.
func (c *checker) checkKeys(n *yaml.Node) {
	switch n = resolve(n); n.Kind {
	case yaml.MappingNode:
		kvs := pairs(n)
		for i := 0; i+1 < len(kvs); i += 2 {
			k := kvs[i]
			c.push(k.Value, -1)
			if k.Tag != "!!str" {
				c.fail(k.Line, "key is %s; quote it to make it a string", describe(k))
			} else {
				c.checkKeys(kvs[i+1])
			}
			c.pop()
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			c.push("", i)
			c.checkKeys(item)
			c.pop()
		}
	case yaml.ScalarNode:
		var f float64
		if n.Tag == "!!float" && n.Decode(&f) == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			c.fail(n.Line, "JSON has no infinity or NaN; quote it to make it a string")
		}
	}
}

// checkInteger returns what n is when it is not an integer that fits t, or "".
func checkInteger(n *yaml.Node, t reflect.Type) string {
	switch n.Tag {
	case "!!int":
		if n.Decode(reflect.New(t).Interface()) != nil {
			return "a number out of range"
		}
		return ""
	case "!!float":
		// JSON has one number type; 1e3 or 80.0 decode as integers, as they would from JSON.
		var f float64
		if n.Decode(&f) != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return "a number with a fraction"
		}
		v := reflect.New(t).Elem()
		if math.Abs(f) > 1<<53 || (v.CanInt() && v.OverflowInt(int64(f))) ||
			(v.CanUint() && (f < 0 || v.OverflowUint(uint64(f)))) {
			return "a number out of range"
		}
		return ""
	}
	return describe(n)
}

// describe names what a node holds, for "want X, got Y" messages; never its value.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a date"
	}
	return strconv.Quote(n.Tag) + " value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
