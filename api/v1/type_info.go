package v1

import (
	"reflect"
	"strings"
	"sync"
)

// typeInfo is what checking and building a document need to know of a Go type, worked
// out once per type: both walk every value of every document, and looking the type up
// in a cache at each value (is it free-form? what are its fields?) would cost a lookup
// per value.
type typeInfo struct {
	t reflect.Type
	// freeForm: a *t decodes itself from JSON (json.Unmarshaler), as a plugin's config
	// (json.RawMessage) does.
	freeForm bool
	// elem is the element's (pointer, slice, map).
	elem *typeInfo
	// fields are a struct's by JSON name, as encoding/json sees them: the json tag's
	// name or the Go name; "-" hides a field; an embedded struct without a name
	// (TypeMeta, tagged ",inline") lends its fields.
	fields map[string]fieldInfo
	// fieldTypes is fields as suggest wants them, for the error of an unknown field.
	fieldTypes map[string]reflect.Type
}

// fieldInfo is one field of a struct.
type fieldInfo struct {
	info *typeInfo
	// index is the field's for reflect.Value.FieldByIndex; nil for a field lent by an
	// embedded struct reached through a pointer, which build leaves to the JSON round
	// trip.
	index []int
	depth int // how many embedded structs in
}

var typeInfos sync.Map // reflect.Type → *typeInfo

// infoOf returns t's typeInfo.
func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := newTypeInfo(t, map[reflect.Type]*typeInfo{})
	actual, _ := typeInfos.LoadOrStore(t, ti)
	return actual.(*typeInfo)
}

// newTypeInfo works out t's typeInfo; seen holds those begun, for recursive types.
func newTypeInfo(t reflect.Type, seen map[reflect.Type]*typeInfo) *typeInfo {
	if ti, ok := seen[t]; ok {
		return ti
	}
	ti := &typeInfo{t: t, freeForm: reflect.PointerTo(t).Implements(unmarshalerType)}
	seen[t] = ti
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		ti.elem = newTypeInfo(t.Elem(), seen)
	case reflect.Struct:
		ti.fields = map[string]fieldInfo{}
		ti.fieldTypes = map[string]reflect.Type{}
		addFields(ti, t, nil, true, seen)
	}
	return ti
}

// addFields adds t's fields to ti, at index under the struct ti describes; direct is
// false below an embedded pointer. As in encoding/json, of two fields with one name
// the one less deeply embedded wins (here, at equal depth, the first).
func addFields(ti *typeInfo, t reflect.Type, index []int, direct bool, seen map[reflect.Type]*typeInfo) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		at := append(index[:len(index):len(index)], i)
		if sf.Anonymous && name == "" {
			switch {
			case sf.Type.Kind() == reflect.Struct:
				addFields(ti, sf.Type, at, direct, seen)
				continue
			case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct:
				addFields(ti, sf.Type.Elem(), at, false, seen)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if had, ok := ti.fields[name]; ok && had.depth <= len(index) {
			continue
		}
		f := fieldInfo{info: newTypeInfo(sf.Type, seen), depth: len(index)}
		if direct {
			f.index = at
		}
		ti.fields[name] = f
		ti.fieldTypes[name] = sf.Type
	}
}
