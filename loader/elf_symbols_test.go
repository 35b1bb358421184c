package loader

import (
	"debug/elf"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrefixedStrings(t *testing.T) {
	long := "go:link." + strings.Repeat("x", 100<<10) // longer than the reader's buffer
	tests := []struct {
		name  string
		table string
		want  map[uint32]string
	}{
		{name: "starts of strings", table: "\x00go:link.a\x00other\x00go:link.b\x00",
			want: map[uint32]string{1: "go:link.a", 17: "go:link.b"}},
		{name: "tail of a longer string", table: "\x00main.go:link.c\x00",
			want: map[uint32]string{6: "go:link.c"}},
		{name: "two in one string", table: "\x00go:link.go:link.d\x00",
			want: map[uint32]string{1: "go:link.go:link.d", 9: "go:link.d"}},
		{name: "longer than the buffer", table: "\x00a\x00" + long + "\x00go:link.e\x00",
			want: map[uint32]string{3: long, uint32(4 + len(long)): "go:link.e"}},
		{name: "last string unterminated", table: "\x00go:link.f",
			want: map[uint32]string{1: "go:link.f"}},
		{name: "none", table: "\x00a\x00b\x00", want: map[uint32]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prefixedStrings(strings.NewReader(tt.table), "go:link.")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("prefixedStrings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrefixedSymbolsMatchDebugELF compares prefixedSymbols with debug/elf's own
// reading of this test binary, which can open plugins and so exports its symbols
// (go test strips its symbol table: both must say so alike).
func TestPrefixedSymbolsMatchDebugELF(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name   string
		typ    elf.SectionType
		all    func() ([]elf.Symbol, error)
		prefix string
	}{
		{name: "package hashes", typ: elf.SHT_DYNSYM, all: f.DynamicSymbols, prefix: pkgHashPrefix},
		{name: "one package's exports", typ: elf.SHT_DYNSYM, all: f.DynamicSymbols, prefix: "gatehouse.dev/gatehouse/loader."},
		{name: "symbol table", typ: elf.SHT_SYMTAB, all: f.Symbols, prefix: "runtime.gc"},
		{name: "no match", typ: elf.SHT_DYNSYM, all: f.DynamicSymbols, prefix: "no such symbol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, err := tt.all()
			if errors.Is(err, elf.ErrNoSymbols) {
				if _, got := prefixedSymbols(f, tt.typ, tt.prefix); !errors.Is(got, elf.ErrNoSymbols) {
					t.Fatalf("debug/elf finds no table; prefixedSymbols says %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []elf.Symbol
			for _, s := range all {
				if strings.HasPrefix(s.Name, tt.prefix) {
					// Fields prefixedSymbols does not read (version information).
					want = append(want, elf.Symbol{Name: s.Name, Info: s.Info, Other: s.Other, Section: s.Section, Value: s.Value, Size: s.Size})
				}
			}
			if tt.prefix != "no such symbol" && len(want) == 0 {
				t.Fatalf("this binary has no symbol starting with %q to compare", tt.prefix)
			}
			got, err := prefixedSymbols(f, tt.typ, tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("prefixedSymbols(%q) (-debug/elf +got):\n%s", tt.prefix, diff)
			}
		})
	}
}

// TestPackageHashesMemory is the reason prefixedSymbols exists: picking the package
// hashes out of a binary that exports every symbol must allocate per package hash, not
// per symbol (DynamicSymbols makes a string of each).
func TestPackageHashesMemory(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := openELF(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	hashes := 0
	for _, s := range syms {
		if strings.HasPrefix(s.Name, pkgHashPrefix) {
			hashes++
		}
	}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := packageHashes(f); err != nil {
			t.Fatal(err)
		}
	})
	// The name, the hash and the map per package, and a fixed few for the readers.
	if limit := 8*hashes + 100; allocs > float64(limit) {
		t.Errorf("packageHashes made %.0f allocations for %d package hashes (limit %d) among %d dynamic symbols", allocs, hashes, limit, len(syms))
	}
}
