// Package wirefields reads the top-level fields of a serialized protobuf message without
// decoding it: for the codecs and parsers that keep, move or skip some fields as bytes
// (what an xDS client announces it holds, a route configuration's virtual hosts, a
// CheckRequest's headers) and hand the rest to proto.
package wirefields

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field is one field of a message as it is on the wire.
type Field struct {
	Num  protowire.Number
	Type protowire.Type
	// Raw is the whole field, its tag included: appended to another message's bytes,
	// it adds the field as it was.
	Raw []byte
	// Value is a length-delimited field's payload; nil for a field of another type.
	Value []byte
}

// Each calls f with every field of b in order, until f returns false. It returns the
// error of the first field that is not well-formed, after f has seen those before it.
func Each(b []byte, f func(Field) bool) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		field := Field{Num: num, Type: typ, Raw: b[:n+m]}
		if typ == protowire.BytesType {
			field.Value, _ = protowire.ConsumeBytes(b[n : n+m])
		}
		if !f(field) {
			return nil
		}
		b = b[n+m:]
	}
	return nil
}

// StringEntry reads an entry of a map<string, string>: its key (field 1) and value
// (field 2), each empty when absent and the last one when repeated, other fields
// skipped, as proto reads it. check, when not nil, is called with every key and value
// met, in order, and its error ends the reading (proto requires UTF-8 of strings; a
// caller that treats them as bytes passes nil).
func StringEntry(b []byte, check func([]byte) error) (key, value []byte, err error) {
	var refused error
	err = Each(b, func(f Field) bool {
		if f.Type != protowire.BytesType || (f.Num != 1 && f.Num != 2) {
			return true
		}
		if check != nil {
			if refused = check(f.Value); refused != nil {
				return false
			}
		}
		if f.Num == 1 {
			key = f.Value
		} else {
			value = f.Value
		}
		return true
	})
	if err != nil || refused != nil {
		return nil, nil, errors.Join(err, refused)
	}
	return key, value, nil
}
