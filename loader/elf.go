package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The linker gives every package of a binary that can open plugins, and of every plugin,
// a dynamic symbol holding the package's link-time hash. When a plugin is opened, the
// runtime compares the plugin's hash of each package with the one the dynamic linker
// resolves for it (the host's, when the host has that package) and refuses the plugin
// on the first difference ("plugin was built with a different version of package P").
// Reading the same symbols from both files gives that verdict without running any code.
const pkgHashPrefix = "go:link.pkghashbytes."

// pluginPathSymbol holds the path that makes a plugin distinct from other plugins; the
// runtime refuses a second plugin with the same path ("plugin already loaded").
const pluginPathSymbol = "go:link.thispluginpath"

type elfFile struct {
	*elf.File
	os *os.File
}

func openELF(path string) (*elfFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &elfFile{File: ef, os: f}, nil
}

func (f *elfFile) Close() error { return f.os.Close() }

// symbolData reads the bytes a symbol's value points at.
func symbolData(f *elf.File, s elf.Symbol) ([]byte, error) {
	if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
		return nil, fmt.Errorf("symbol %s is not in a section", s.Name)
	}
	sec := f.Sections[s.Section]
	if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
		return nil, fmt.Errorf("symbol %s lies outside its section", s.Name)
	}
	b := make([]byte, s.Size)
	if _, err := sec.ReadAt(b, int64(s.Value-sec.Addr)); err != nil {
		return nil, fmt.Errorf("reading symbol %s: %w", s.Name, err)
	}
	return b, nil
}

// packageHashes returns the link-time hash of every package in f, by import path.
func packageHashes(f *elfFile) (map[string]string, error) {
	syms, err := prefixedSymbols(f.File, elf.SHT_DYNSYM, pkgHashPrefix)
	if err != nil {
		return nil, err
	}
	hashes := make(map[string]string, len(syms))
	for _, s := range syms {
		pkg := strings.TrimPrefix(s.Name, pkgHashPrefix)
		b, err := symbolData(f.File, s)
		if err != nil {
			return nil, err
		}
		hashes[pkg] = hex.EncodeToString(b)
	}
	return hashes, nil
}

// pluginPath returns the plugin path the runtime will register f under. The symbol
// holding it is local, so it is gone from stripped files (-ldflags=-s); then the path is
// the main package's import path, or for a build from a list of files the
// "plugin/unnamed-…" package that holds its hash.
func pluginPath(f *elfFile, mainPackage string) string {
	if syms, err := prefixedSymbols(f.File, elf.SHT_SYMTAB, pluginPathSymbol); err == nil {
		for _, s := range syms {
			if s.Name == pluginPathSymbol {
				if b, err := symbolData(f.File, s); err == nil {
					return string(b)
				}
			}
		}
	}
	if mainPackage != "" && mainPackage != "command-line-arguments" {
		return mainPackage
	}
	syms, _ := prefixedSymbols(f.File, elf.SHT_DYNSYM, pkgHashPrefix+"plugin/unnamed-")
	if len(syms) == 0 {
		return ""
	}
	return strings.TrimPrefix(syms[0].Name, pkgHashPrefix)
}

// exports lists the exported names of the plugin's main package: what Lookup can find.
func exports(f *elfFile, pluginPath string) []string {
	if pluginPath == "" {
		return nil
	}
	syms, _ := prefixedSymbols(f.File, elf.SHT_DYNSYM, pluginPath+".")
	var names []string
	for _, s := range syms {
		name := strings.TrimPrefix(s.Name, pluginPath+".")
		if strings.ContainsAny(name, ".·") {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(name); !unicode.IsUpper(r) {
			continue
		}
		if t := elf.ST_TYPE(s.Info); t == elf.STT_OBJECT || t == elf.STT_FUNC {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// LibcNeeds is what a plugin needs from the C library.
type LibcNeeds struct {
	// Libraries are the shared libraries the plugin names (DT_NEEDED).
	Libraries []string `json:"libraries,omitempty"`
	// GLIBC is the newest glibc symbol version it needs ("GLIBC_2.34"), if any.
	GLIBC string `json:"glibc,omitempty"`
}

func libcNeeds(f *elfFile) LibcNeeds {
	var n LibcNeeds
	n.Libraries, _ = f.ImportedLibraries()
	needs, _ := f.DynamicVersionNeeds()
	for _, need := range needs {
		for _, d := range need.Needs {
			if strings.HasPrefix(d.Dep, "GLIBC_") && (n.GLIBC == "" || compareDotted(glibcNumber(d.Dep), glibcNumber(n.GLIBC)) > 0) {
				n.GLIBC = d.Dep
			}
		}
	}
	return n
}

// checkExtent returns an error when the headers of f describe bytes past the end of the
// file, which is what an interrupted copy leaves.
func checkExtent(f *elf.File, size int64) error {
	end := uint64(0)
	for _, p := range f.Progs {
		end = max(end, p.Off+p.Filesz)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS {
			end = max(end, s.Offset+s.FileSize)
		}
	}
	if end > uint64(size) {
		return fmt.Errorf("the file is %d bytes but its ELF headers describe at least %d", size, end)
	}
	return nil
}

// checkHeaderExtent reads the ELF header itself, so that a file cut short before its
// section headers is called truncated rather than invalid.
func checkHeaderExtent(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, binary.Size(elf.Header64{}))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	return headerExtent(head[:n], size)
}

// headerExtent checks that a file of size bytes starting with head (at least its ELF
// header) holds the section and program header tables its ELF header places.
func headerExtent(head []byte, size int64) error {
	if len(head) < elf.EI_NIDENT {
		return fmt.Errorf("the file is %d bytes, shorter than an ELF header", size)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(head[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	r := bytes.NewReader(head)
	var end uint64
	switch elf.Class(head[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		var h elf.Header64
		if err := binary.Read(r, order, &h); err != nil {
			return fmt.Errorf("the file is %d bytes, shorter than an ELF header (%d)", size, binary.Size(h))
		}
		end = max(h.Shoff+uint64(h.Shnum)*uint64(h.Shentsize), h.Phoff+uint64(h.Phnum)*uint64(h.Phentsize))
	case elf.ELFCLASS32:
		var h elf.Header32
		if err := binary.Read(r, order, &h); err != nil {
			return fmt.Errorf("the file is %d bytes, shorter than an ELF header (%d)", size, binary.Size(h))
		}
		end = uint64(max(h.Shoff+uint32(h.Shnum)*uint32(h.Shentsize), h.Phoff+uint32(h.Phnum)*uint32(h.Phentsize)))
	}
	if end > uint64(size) {
		return fmt.Errorf("the file is %d bytes but its ELF headers describe at least %d", size, end)
	}
	return nil
}

// machines maps GOARCH to the ELF machine its binaries are built for.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "386": elf.EM_386, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM,
	"ppc64le": elf.EM_PPC64, "ppc64": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
	"loong64": elf.EM_LOONGARCH, "mips64le": elf.EM_MIPS, "mips64": elf.EM_MIPS,
}
