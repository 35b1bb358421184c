package v1

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// build sets v from the nodes of a fast-path document (fastDocuments) that checkFields
// found nothing wrong with, as encoding/json would from the document written as JSON,
// without that round trip (decoding the document into generic values, marshalling them
// and decoding the JSON). It returns false for anything it does not handle, and
// decodeInto then takes the round trip (TestBuildIsTheJSONRoundTrip holds the two to the
// same result).
func build(n *yaml.Node, v reflect.Value) bool {
	return buildValue(n, v, infoOf(v.Type()))
}

// buildValue is build for a value of the type ti describes.
func buildValue(n *yaml.Node, v reflect.Value, ti *typeInfo) bool {
	if ti.freeForm && v.CanAddr() {
		// Free-form (a plugin's config): the very bytes the round trip would give, null
		// included.
		raw, ok := freeFormJSON(n)
		return ok && v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw) == nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return true // null leaves the (fresh, zero) value as it is, as in JSON
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		v.Set(e)
		return buildValue(n, e.Elem(), ti.elem)
	case reflect.Struct:
		return buildStruct(n, v, ti)
	case reflect.Map:
		if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
			return false
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			e := reflect.New(v.Type().Elem()).Elem()
			if !buildValue(n.Content[i+1], e, ti.elem) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(n.Content[i].Value).Convert(v.Type().Key()), e)
		}
		v.Set(m)
		return true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, err := base64.StdEncoding.DecodeString(n.Value)
			v.SetBytes(b)
			return n.Kind == yaml.ScalarNode && err == nil
		}
		if n.Kind != yaml.SequenceNode {
			return false
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if !buildValue(item, s.Index(i), ti.elem) {
				return false
			}
		}
		v.Set(s)
		return true
	}
	return buildScalar(n, v)
}

func buildScalar(n *yaml.Node, v reflect.Value) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
		return n.Tag == "!!str"
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		v.SetBool(b)
		return n.Tag == "!!bool" && err == nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		v.SetInt(i)
		return n.Tag == "!!int" && err == nil && !v.OverflowInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(n.Value, 10, 64)
		v.SetUint(u)
		return n.Tag == "!!int" && err == nil && !v.OverflowUint(u)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		v.SetFloat(f)
		return n.Tag == "!!int" && err == nil && !v.OverflowFloat(f)
	}
	return false
}

func buildStruct(n *yaml.Node, v reflect.Value, ti *typeInfo) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f, ok := ti.fields[n.Content[i].Value]
		if !ok || f.index == nil || n.Content[i].Tag != "!!str" {
			return false
		}
		if !buildValue(n.Content[i+1], v.FieldByIndex(f.index), f.info) {
			return false
		}
	}
	return true
}

// duplicateKeys says whether a mapping of the tree has a key twice, which decoding
// refuses with yaml.v3's error (the round trip gives it).
func duplicateKeys(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			for j := i + 2; j < len(n.Content); j += 2 {
				if n.Content[i].Kind == n.Content[j].Kind && n.Content[i].Value == n.Content[j].Value {
					return true
				}
			}
		}
	}
	for _, c := range n.Content {
		if duplicateKeys(c) {
			return true
		}
	}
	return false
}
