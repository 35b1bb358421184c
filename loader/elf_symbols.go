package loader

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// prefixedSymbols returns the symbols of f's table of type typ (elf.SHT_SYMTAB or
// elf.SHT_DYNSYM) whose names start with prefix, in table order.
//
// It reads the table a piece at a time rather than through Symbols or DynamicSymbols:
// a binary that can open plugins exports every symbol it has, and those make an
// elf.Symbol and a string of each: heap that lives only while the hashes are picked
// out but stays in the process's RSS for minutes after.
func prefixedSymbols(f *elf.File, typ elf.SectionType, prefix string) ([]elf.Symbol, error) {
	tab := f.SectionByType(typ)
	if tab == nil {
		return nil, elf.ErrNoSymbols
	}
	if tab.Link == 0 || int(tab.Link) >= len(f.Sections) {
		return nil, fmt.Errorf("symbol table %s has no string table", tab.Name)
	}
	names, err := prefixedStrings(f.Sections[tab.Link].Open(), prefix)
	if err != nil {
		return nil, fmt.Errorf("string table of %s: %w", tab.Name, err)
	}
	size := 24 // elf.Sym64Size
	if f.Class == elf.ELFCLASS32 {
		size = 16 // elf.Sym32Size
	}
	if tab.Size%uint64(size) != 0 {
		return nil, fmt.Errorf("symbol table %s is %d bytes, not a whole number of %d-byte entries", tab.Name, tab.Size, size)
	}
	r := bufio.NewReaderSize(tab.Open(), 64<<10)
	ent := make([]byte, size)
	var out []elf.Symbol
	for i := uint64(0); i < tab.Size/uint64(size); i++ {
		if _, err := io.ReadFull(r, ent); err != nil {
			return nil, fmt.Errorf("reading symbol table %s: %w", tab.Name, err)
		}
		name, ok := names[f.ByteOrder.Uint32(ent)]
		if !ok || i == 0 { // entry 0 is the undefined symbol, which Symbols leaves out too
			continue
		}
		s := elf.Symbol{Name: name}
		if f.Class == elf.ELFCLASS32 {
			s.Value = uint64(f.ByteOrder.Uint32(ent[4:]))
			s.Size = uint64(f.ByteOrder.Uint32(ent[8:]))
			s.Info, s.Other = ent[12], ent[13]
			s.Section = elf.SectionIndex(f.ByteOrder.Uint16(ent[14:]))
		} else {
			s.Info, s.Other = ent[4], ent[5]
			s.Section = elf.SectionIndex(f.ByteOrder.Uint16(ent[6:]))
			s.Value = f.ByteOrder.Uint64(ent[8:])
			s.Size = f.ByteOrder.Uint64(ent[16:])
		}
		out = append(out, s)
	}
	return out, nil
}

// prefixedStrings maps the offset of every name in the string table read from r that
// starts with prefix to that name. A symbol's name may start inside another's (the tail of a
// longer string), so every occurrence of prefix counts, not only the starts of strings.
func prefixedStrings(r io.Reader, prefix string) (map[uint32]string, error) {
	if prefix == "" {
		return nil, errors.New("an empty prefix would keep every name")
	}
	p := []byte(prefix)
	br := bufio.NewReaderSize(r, 64<<10)
	out := map[uint32]string{}
	var long []byte // a string longer than r's buffer, gathered
	off := uint64(0)
	for {
		chunk, err := br.ReadSlice(0)
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		s := chunk
		if long != nil {
			s = append(long, chunk...)
			long = nil
		}
		for i := 0; ; {
			j := bytes.Index(s[i:], p)
			if j < 0 {
				break
			}
			at := off + uint64(i+j)
			if at > uint64(^uint32(0)) {
				return nil, errors.New("more bytes than a symbol can index")
			}
			out[uint32(at)] = string(bytes.TrimSuffix(s[i+j:], []byte{0}))
			i += j + 1
		}
		off += uint64(len(s))
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
