package loader

import (
	"fmt"
	"strings"

	goversion "github.com/hashicorp/go-version"
)

// modules compares every module the plugin shares with the host (other than Gatehouse,
// see gatehouse). A module at another version is an error when one of its packages
// that both link hashes differently, and a warning when none does: the runtime only
// compares packages.
func (p *preflight) modules() {
	plugin := append([]Module{p.pf.Main}, p.pf.Modules...)
	for _, pm := range plugin {
		if pm.Path == "" || pm.Path == GatehouseModule {
			continue
		}
		hm, ok := p.c.Module(pm.Path)
		if !ok || sameModule(hm, pm) {
			continue
		}
		pkgs := p.packagesOf(pm.Path)
		check := "module " + pm.Path
		if p.hashesKnown && len(pkgs) == 0 {
			if !hm.Local() && !pm.Local() {
				p.add(warnf(check, describe(hm, pm), describe(pm, hm), "no package of it that both link differs, so it loads; "+requireFix(hm, pm)+" keeps it that way"))
			}
			continue
		}
		f := errorf(check, describe(hm, pm), describe(pm, hm), requireFix(hm, pm)+", then rebuild; "+viaBuild+" (it pins every shared module)")
		if len(pkgs) > 0 {
			f.Detail = differ(pkgs)
		}
		p.add(f)
		for _, pkg := range pkgs {
			p.explained[pkg] = true
		}
	}
}

// gatehouse compares the Gatehouse version the plugin was built against with the host's
// (internal/version.Version). Equal versions (by hashicorp/go-version, so v0.1.0 equals
// 0.1.0) are compatible. Another version is compatible only if the Gatehouse packages
// the plugin links (pluginapi) hash the same as the host's: then it is a warning. A
// plugin built inside a Gatehouse checkout ("(devel)") or against one through a replace
// directive has no version to compare, and the package hashes alone decide.
func (p *preflight) gatehouse() {
	pm, ok := p.pf.Module(GatehouseModule)
	if !ok || pm.Local() {
		return
	}
	pv := pm.Version
	if pm.Replace != nil {
		pv = pm.Replace.Version
	}
	hv := p.c.GatehouseVersion
	pkgs := p.packagesOf(GatehouseModule)
	fix := fmt.Sprintf("go mod edit -require=%s@v%s && go mod tidy, then rebuild; %s", GatehouseModule, strings.TrimPrefix(hv, "v"), viaBuild)
	hostV, herr := goversion.NewVersion(hv)
	plugV, perr := goversion.NewVersion(pv)
	switch {
	case herr != nil || perr != nil:
		if p.hashesKnown && len(pkgs) == 0 {
			p.add(warnf("gatehouse version", hv, pv, "not comparable versions; the Gatehouse packages it links are identical to the host's, so it loads"))
			return
		}
		p.add(errorf("gatehouse version", hv, pv, fix))
	case hostV.Equal(plugV):
		return
	case p.hashesKnown && len(pkgs) == 0 && hostV.Segments()[0] == plugV.Segments()[0]:
		p.add(warnf("gatehouse version", hv, pv, "the Gatehouse packages it links are identical to the host's, so it loads; rebuild against "+hv+" to keep in step"))
		return
	default:
		f := errorf("gatehouse version", hv, pv, fix)
		if len(pkgs) > 0 {
			f.Detail = differ(pkgs)
		}
		p.add(f)
	}
	for _, pkg := range pkgs {
		p.explained[pkg] = true
	}
}

// packagesOf returns the packages of diff that belong to module mod: the longest module
// path, among both sides' modules, that prefixes the package path.
func (p *preflight) packagesOf(mod string) []string {
	var mods []string
	for _, m := range append(append([]Module{p.c.Main, p.pf.Main}, p.c.Modules...), p.pf.Modules...) {
		if m.Path != "" {
			mods = append(mods, m.Path)
		}
	}
	var out []string
	for _, pkg := range p.diff {
		best := ""
		for _, m := range mods {
			if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
				best = m
			}
		}
		if best == mod {
			out = append(out, pkg)
		}
	}
	return out
}

// sameModule reports whether two modules have the same source: same version and sum,
// or the same replacement.
func sameModule(a, b Module) bool {
	ar, br := a.Replace, b.Replace
	switch {
	case ar == nil && br == nil:
		return a.Version == b.Version && (a.Sum == "" || b.Sum == "" || a.Sum == b.Sum)
	case ar != nil && br != nil:
		return ar.Path == br.Path && ar.Version == br.Version && (ar.Sum == "" || br.Sum == "" || ar.Sum == br.Sum)
	}
	return false
}

// describe is m as a user compares it with other: the version, and the sum only when
// the versions are equal and the sums are not.
func describe(m, other Module) string {
	if m.Replace != nil {
		if unversioned(m.Replace.Version) {
			return fmt.Sprintf("%s (replaced by directory %s)", m.Version, m.Replace.Path)
		}
		return fmt.Sprintf("%s (replaced by %s@%s)", m.Version, m.Replace.Path, m.Replace.Version)
	}
	if other.Replace == nil && m.Version == other.Version && m.Sum != other.Sum {
		return m.Version + " " + m.Sum
	}
	return m.Version
}

// requireFix is the go.mod edit that gives the plugin the host's copy of module hm.
func requireFix(hm, pm Module) string {
	drop := ""
	if pm.Replace != nil {
		drop = " -dropreplace=" + pm.Path
	}
	switch {
	case hm.Replace != nil && unversioned(hm.Replace.Version):
		return fmt.Sprintf("go mod edit%s -replace=%s=%s (the host uses that directory's copy)", drop, hm.Path, hm.Replace.Path)
	case hm.Replace != nil:
		return fmt.Sprintf("go mod edit -replace=%s=%s@%s", hm.Path, hm.Replace.Path, hm.Replace.Version)
	case hm.Local():
		return fmt.Sprintf("build against the same source directory as the host (%s is the host's main module)", hm.Path)
	}
	return fmt.Sprintf("go mod edit%s -require=%s@%s && go mod tidy", drop, hm.Path, hm.Version)
}
