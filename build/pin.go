package build

import (
	"fmt"
	"sort"
	"strings"

	"gatehouse.dev/gatehouse/loader"
)

// Pin is one go.mod edit that gives the plugin the host's copy of a module.
type Pin struct {
	Path string
	// From is the plugin's version before the edit.
	From string
	// To is the host's version; Replace, when set, is the host's replacement.
	To      string
	Replace *loader.Module
}

// Arg is the `go mod edit` flag for the pin.
func (p Pin) Arg() string {
	if p.Replace != nil {
		return fmt.Sprintf("-replace=%s=%s@%s", p.Path, p.Replace.Path, p.Replace.Version)
	}
	return fmt.Sprintf("-require=%s@%s", p.Path, p.To)
}

// Pins returns the edits that bring every module of the plugin's build list that the
// host also has to the host's version. Modules the host has from a local directory
// cannot be pinned to (Gatehouse itself is handled by --gatehouse-src). When gatehouse
// is not replaced, the plugin is pinned to the host's release, v<GatehouseVersion>.
func Pins(c *loader.Contract, list []loader.Module, gatehouseReplaced bool) []Pin {
	var pins []Pin
	for _, m := range list {
		if m.Path == loader.GatehouseModule {
			if want := "v" + strings.TrimPrefix(c.GatehouseVersion, "v"); !gatehouseReplaced && m.Version != want {
				pins = append(pins, Pin{Path: m.Path, From: m.Version, To: want})
			}
			continue
		}
		hm, ok := c.Module(m.Path)
		if !ok || hm.Local() || m.Replace != nil && m.Local() {
			continue
		}
		switch {
		case hm.Replace != nil:
			if m.Replace == nil || *m.Replace != *hm.Replace {
				r := *hm.Replace
				pins = append(pins, Pin{Path: m.Path, From: m.Version, To: hm.Version, Replace: &r})
			}
		case m.Version != hm.Version:
			pins = append(pins, Pin{Path: m.Path, From: m.Version, To: hm.Version})
		}
	}
	sort.Slice(pins, func(i, j int) bool { return pins[i].Path < pins[j].Path })
	return pins
}
