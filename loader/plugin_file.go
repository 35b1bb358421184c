package loader

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"sort"
)

// PluginFile is what pre-flight reads from a plugin file without running any of it.
type PluginFile struct {
	GoVersion string `json:"goVersion"`
	// MainPackage is the import path of the plugin's main package, or
	// "command-line-arguments" for a build from a list of files.
	MainPackage string `json:"mainPackage"`
	// Main is the main module; empty for a build from a list of files.
	Main     Module            `json:"main"`
	Modules  []Module          `json:"modules"`
	Settings map[string]string `json:"settings"`
	// PluginPath is the path the runtime registers the plugin under.
	PluginPath    string            `json:"pluginPath,omitempty"`
	PackageHashes map[string]string `json:"packageHashes,omitempty"`
	// Exports are the exported names of the main package.
	Exports []string       `json:"exports,omitempty"`
	Libc    LibcNeeds      `json:"libc"`
	ELF     ELFDescription `json:"elf"`
}

// ELFDescription is the shape of the file.
type ELFDescription struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Machine string `json:"machine"`
}

// Module returns the plugin's module with path p: the main module or a dependency.
func (pf *PluginFile) Module(p string) (Module, bool) {
	if pf.Main.Path == p {
		return pf.Main, true
	}
	for _, m := range pf.Modules {
		if m.Path == p {
			return m, true
		}
	}
	return Module{}, false
}

// ReadPluginFile reads path's ELF headers, Go build information and package hashes. A
// file that is not a readable Go ELF file gives a Finding saying why and how to fix it.
func ReadPluginFile(path string) (*PluginFile, *Finding) {
	fail := func(detail, fix string) (*PluginFile, *Finding) {
		return nil, &Finding{Severity: SeverityError, Check: "file", Detail: detail, Fix: fix}
	}
	const rebuild = "build the plugin with `go build -buildmode=plugin` (or `gatehouse plugin build`)"
	const recopy = "copy the file again; the plugin image's copier writes files atomically, so a half-written file means something else wrote it"
	st, err := os.Stat(path)
	if err != nil {
		return fail(fmt.Sprintf("cannot read the file: %v", err), "")
	}
	if !st.Mode().IsRegular() {
		return fail("not a regular file", rebuild)
	}
	if err := checkMagic(path); err != nil {
		return fail(err.Error(), rebuild)
	}
	if err := checkHeaderExtent(path, st.Size()); err != nil {
		return fail("truncated: "+err.Error(), recopy)
	}
	f, err := openELF(path)
	if err != nil {
		return fail(fmt.Sprintf("not a valid ELF file, or truncated (%v)", err), recopy)
	}
	defer f.Close()
	if err := checkExtent(f.File, st.Size()); err != nil {
		return fail("truncated: "+err.Error(), recopy)
	}
	pf := &PluginFile{ELF: ELFDescription{
		Class: f.Class.String(), Type: f.Type.String(), Machine: f.Machine.String(),
	}}
	bi, err := buildinfo.Read(f.os)
	if err != nil {
		return fail(fmt.Sprintf("no Go build information (%v): not a Go plugin", err), rebuild)
	}
	pf.GoVersion, pf.MainPackage = bi.GoVersion, bi.Path
	pf.Main = fromDebug(&bi.Main)
	for _, d := range bi.Deps {
		pf.Modules = append(pf.Modules, fromDebug(d))
	}
	sort.Slice(pf.Modules, func(i, j int) bool { return pf.Modules[i].Path < pf.Modules[j].Path })
	pf.Settings = settingsMap(bi.Settings)
	if pf.PackageHashes, err = packageHashes(f); err != nil {
		return fail(fmt.Sprintf("unreadable package hashes (%v)", err), recopy)
	}
	pf.PluginPath = pluginPath(f, bi.Path)
	pf.Exports = exports(f, pf.PluginPath)
	pf.Libc = libcNeeds(f)
	return pf, nil
}

// checkMagic tells a file that is not ELF at all apart from a broken one, naming what it
// looks like instead.
func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case n == 0:
		return fmt.Errorf("empty file")
	case bytes.Equal(head, []byte(elf.ELFMAG)):
		return nil
	case err != nil:
		return fmt.Errorf("not an ELF file (only %d bytes)", n)
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return fmt.Errorf("not an ELF file: it is gzip-compressed; extract the .so from the archive")
	case bytes.HasPrefix(head, []byte("PK")):
		return fmt.Errorf("not an ELF file: it is a zip archive; extract the .so from the archive")
	case bytes.HasPrefix(head, []byte("#!")):
		return fmt.Errorf("not an ELF file: it is a script")
	case bytes.Equal(head, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return fmt.Errorf("not an ELF file: it is a macOS Mach-O binary; build on Linux or with GOOS=linux")
	}
	return fmt.Errorf("not an ELF file (it starts with %q)", head)
}
