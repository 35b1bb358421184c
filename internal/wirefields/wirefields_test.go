package wirefields

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestEachSeesEveryFieldAsWritten: the fields of a message come in order, each with its
// tag, and put back together they are the message again.
func TestEachSeesEveryFieldAsWritten(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, "two")
	b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 7)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, "")
	type seen struct {
		Num   protowire.Number
		Type  protowire.Type
		Value string
	}
	var got []seen
	var again []byte
	if err := Each(b, func(f Field) bool {
		got = append(got, seen{f.Num, f.Type, string(f.Value)})
		again = append(again, f.Raw...)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []seen{{1, protowire.VarintType, ""}, {2, protowire.BytesType, "two"}, {3, protowire.Fixed64Type, ""}, {2, protowire.BytesType, ""}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	if string(again) != string(b) {
		t.Errorf("the fields' Raw put together are not the message")
	}
	n := 0
	_ = Each(b, func(Field) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Each went on after f returned false: %d calls", n)
	}
}

// TestEachRefusesWhatProtoRefuses: a message cut short or with a broken tag is an
// error after the fields before it, as proto refuses it.
func TestEachRefusesWhatProtoRefuses(t *testing.T) {
	good, err := proto.Marshal(structpb.NewStringValue("a string"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"cut short":     good[:len(good)-1],
		"broken tag":    append(append([]byte(nil), good...), 0x80),
		"field zero":    append(append([]byte(nil), good...), 0x00, 0x01),
		"length beyond": append(append([]byte(nil), good...), 0x0a, 0x7f),
	} {
		if proto.Unmarshal(b, &structpb.Value{}) == nil {
			t.Fatalf("%s: proto accepts it; the case tests nothing", name)
		}
		calls := 0
		err := Each(b, func(Field) bool { calls++; return true })
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if name != "cut short" && calls != 1 {
			t.Errorf("%s: f saw %d fields before the broken one, want 1", name, calls)
		}
	}
}

// TestStringEntryReadsAsProtoReads: a map entry's last key and value win, other fields
// are skipped, and check's error ends the reading.
func TestStringEntryReadsAsProtoReads(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "first")
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, "value")
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "key")
	key, value, err := StringEntry(b, nil)
	if err != nil || string(key) != "key" || string(value) != "value" {
		t.Errorf("StringEntry = %q, %q, %v; want \"key\", \"value\", nil", key, value, err)
	}
	refused := errors.New("refused")
	var checked []string
	_, _, err = StringEntry(b, func(s []byte) error {
		checked = append(checked, string(s))
		if string(s) == "value" {
			return refused
		}
		return nil
	})
	if !errors.Is(err, refused) || !cmp.Equal(checked, []string{"first", "value"}) {
		t.Errorf("with a check refusing \"value\": %v after checking %q", err, checked)
	}
	if key, value, err := StringEntry(nil, nil); err != nil || key != nil || value != nil {
		t.Errorf("an empty entry: %q, %q, %v", key, value, err)
	}
}
