package loader

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"gatehouse.dev/gatehouse/internal/version"
)

// GatehouseModule is the module path of Gatehouse itself.
const GatehouseModule = "gatehouse.dev/gatehouse"

// Module is one Go module of a build, as recorded in its build information.
type Module struct {
	Path    string  `json:"path"`
	Version string  `json:"version"`
	Sum     string  `json:"sum,omitempty"`
	Replace *Module `json:"replace,omitempty"`
}

// String is "path@version" followed by the replacement, if any.
func (m Module) String() string {
	s := m.Path + "@" + m.Version
	if m.Replace != nil {
		s += " => " + m.Replace.Path
		if !unversioned(m.Replace.Version) {
			s += "@" + m.Replace.Version
		}
	}
	return s
}

// Local reports whether the module's source is a directory on the build machine: a
// main module, or one replaced by a directory. Such a module has no version to compare.
func (m Module) Local() bool {
	if m.Replace != nil {
		return unversioned(m.Replace.Version)
	}
	return unversioned(m.Version)
}

func unversioned(v string) bool { return v == "" || v == "(devel)" }

// Libc is the C library the host process runs with.
type Libc struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
}

// Contract is what a plugin must match to load into a host: the host's Go release, build
// settings, module versions, package hashes and C library. `gatehouse plugin contract`
// prints it; pre-flight and `gatehouse plugin build` read it.
type Contract struct {
	GatehouseVersion string `json:"gatehouseVersion"`
	GoVersion        string `json:"goVersion"`
	GOOS             string `json:"goos"`
	GOARCH           string `json:"goarch"`
	// Settings are the build settings of the host binary (-trimpath, CGO_ENABLED, …).
	Settings map[string]string `json:"settings"`
	Main     Module            `json:"main"`
	Modules  []Module          `json:"modules"`
	Libc     *Libc             `json:"libc,omitempty"`
	// PackageHashes are the link-time hashes of every package in the host, by import
	// path. The runtime refuses a plugin whose copy of a package hashes differently.
	PackageHashes map[string]string `json:"packageHashes,omitempty"`
}

// Module returns the host's module with path p: the main module or a dependency.
func (c *Contract) Module(p string) (Module, bool) {
	if c.Main.Path == p {
		return c.Main, true
	}
	for _, m := range c.Modules {
		if m.Path == p {
			return m, true
		}
	}
	return Module{}, false
}

// ContractFromBuildInfo is the part of the contract a binary's build information holds.
func ContractFromBuildInfo(bi *debug.BuildInfo, gatehouseVersion string) *Contract {
	c := &Contract{
		GatehouseVersion: gatehouseVersion,
		GoVersion:        bi.GoVersion,
		Settings:         settingsMap(bi.Settings),
		Main:             fromDebug(&bi.Main),
	}
	c.GOOS, c.GOARCH = c.Settings["GOOS"], c.Settings["GOARCH"]
	for _, d := range bi.Deps {
		c.Modules = append(c.Modules, fromDebug(d))
	}
	sort.Slice(c.Modules, func(i, j int) bool { return c.Modules[i].Path < c.Modules[j].Path })
	return c
}

func settingsMap(ss []debug.BuildSetting) map[string]string {
	m := make(map[string]string, len(ss))
	for _, s := range ss {
		if strings.HasPrefix(s.Key, "vcs") {
			continue // where the host was built from is not part of the ABI
		}
		m[s.Key] = s.Value
	}
	return m
}

func fromDebug(m *debug.Module) Module {
	out := Module{Path: m.Path, Version: m.Version, Sum: m.Sum}
	if m.Replace != nil {
		r := fromDebug(m.Replace)
		out.Replace = &r
	}
	return out
}

var host = sync.OnceValues(readHostContract)

// HostContract is the contract of the running binary. It is read once.
func HostContract() (*Contract, error) { return host() }

func readHostContract() (*Contract, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, errors.New("loader: this binary has no build information; build it with module support")
	}
	c := ContractFromBuildInfo(bi, version.Version)
	exe, err := selfExecutable()
	if err != nil {
		return nil, fmt.Errorf("loader: finding this executable: %w", err)
	}
	f, err := openELF(exe)
	if err != nil {
		return nil, fmt.Errorf("loader: reading this executable: %w", err)
	}
	defer f.Close()
	if c.PackageHashes, err = packageHashes(f); err != nil {
		return nil, fmt.Errorf("loader: reading package hashes of this executable: %w", err)
	}
	c.Libc = hostLibc()
	return c, nil
}
