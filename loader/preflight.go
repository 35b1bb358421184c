package loader

import (
	"fmt"
	"sort"
	"strings"
)

// Preflight compares a plugin file with the host contract and returns every difference:
// errors for those that make the runtime refuse the plugin (or crash), warnings for the
// ones it accepts. It runs no plugin code.
//
// The package hashes are the runtime's own verdict; the other checks say which setting
// or module caused a difference and how to fix it, and still work when the hashes are
// not available.
func Preflight(c *Contract, pf *PluginFile) []Finding {
	p := &preflight{c: c, pf: pf, explained: map[string]bool{}}
	p.diff = packageDiff(c.PackageHashes, pf.PackageHashes)
	p.hashesKnown = len(c.PackageHashes) > 0 && len(pf.PackageHashes) > 0
	p.toolchain()
	p.shape()
	p.hardSettings()
	p.compileSettings()
	p.modules()
	p.gatehouse()
	p.softSettings()
	p.packages()
	p.libc()
	return p.findings
}

type preflight struct {
	c  *Contract
	pf *PluginFile
	// diff holds the packages both link whose hashes differ.
	diff        []string
	hashesKnown bool
	// explained marks packages of diff a module finding accounts for; settingsExplain
	// is set when a build setting accounts for all of them.
	explained       map[string]bool
	settingsExplain bool
	// soft lists the accepted setting differences, as possible causes of diff.
	soft     []string
	findings []Finding
}

func (p *preflight) add(f Finding) { p.findings = append(p.findings, f) }

const viaBuild = "`gatehouse plugin build --module DIR --out DIR` builds with the host's settings"

func (p *preflight) toolchain() {
	hv, pv := goRelease(p.c.GoVersion), goRelease(p.pf.GoVersion)
	if hv != pv {
		f := errorf("go version", hv, pv, fmt.Sprintf("rebuild with %s: %s, or `GOTOOLCHAIN=%s go build -buildmode=plugin …`", hv, viaBuild, hv))
		if goMinor(hv) != goMinor(pv) {
			f.Detail = "opening a plugin of another Go release can crash the whole process, so it is never opened"
		}
		p.add(f)
		p.settingsExplain = true
	}
	for _, k := range []string{"GOOS", "GOARCH"} {
		if h, pl := p.c.Settings[k], p.pf.Settings[k]; h != pl {
			p.add(errorf(k, h, pl, fmt.Sprintf("rebuild with %s=%s", k, h)))
			p.settingsExplain = true
		}
	}
	if bm := p.pf.Settings["-buildmode"]; bm != "plugin" {
		p.add(errorf("-buildmode", "plugin", bm, "build with `go build -buildmode=plugin`"))
		p.settingsExplain = true
	}
}

func (p *preflight) shape() {
	if p.pf.ELF.Type != "" && p.pf.ELF.Type != "ET_DYN" {
		p.add(Finding{Severity: SeverityError, Check: "file",
			Detail: fmt.Sprintf("ELF type %s: not a shared object", p.pf.ELF.Type),
			Fix:    "build with `go build -buildmode=plugin`"})
	}
	want, ok := machines[p.c.GOARCH]
	if ok && p.pf.ELF.Machine != "" && p.pf.ELF.Machine != want.String() && p.c.GOARCH == p.pf.Settings["GOARCH"] {
		p.add(errorf("ELF machine", want.String(), p.pf.ELF.Machine, "rebuild with GOARCH="+p.c.GOARCH))
	}
}

// hardSettings are settings with which every package compiles differently: the runtime
// always refuses a plugin that differs from the host in one of them.
func (p *preflight) hardSettings() {
	for _, k := range []string{"-compiler", "-trimpath", "-race", "-msan", "-asan", "GOEXPERIMENT", "CGO_ENABLED"} {
		h, pl := settingValue(p.c.Settings, k), settingValue(p.pf.Settings, k)
		if h == pl {
			continue
		}
		p.add(errorf(k, h, pl, settingFix(k, h)+"; "+viaBuild))
		p.settingsExplain = true
	}
}

// compileSettings change the compiled code of the packages they apply to, which may or
// may not be packages the plugin shares with the host; the hashes decide.
func (p *preflight) compileSettings() {
	for _, k := range []string{"-gcflags", "-asmflags", "-pgo"} {
		h, pl := settingValue(p.c.Settings, k), settingValue(p.pf.Settings, k)
		if h == pl {
			continue
		}
		if p.hashesKnown && len(p.diff) == 0 {
			p.add(warnf(k, h, pl, "no package shared with the host is affected, so it loads"))
			continue
		}
		p.add(errorf(k, h, pl, settingFix(k, h)+"; "+viaBuild))
		p.settingsExplain = true
	}
}

// softSettings are differences the runtime accepts as long as the hashes agree.
func (p *preflight) softSettings() {
	keys := []string{"-tags", "-cover", "-covermode", "-ldflags"}
	for k := range p.c.Settings {
		if archLevel(k) {
			keys = append(keys, k)
		}
	}
	for k := range p.pf.Settings {
		if archLevel(k) && p.c.Settings[k] == "" {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		h, pl := settingValue(p.c.Settings, k), settingValue(p.pf.Settings, k)
		switch {
		case k == "-ldflags":
			if strings.Contains(pl, "-pluginpath") {
				p.add(warnf(k, "", pl, "-pluginpath set by hand breaks symbol lookup; build from a list of files instead (gatehouse plugin build does), which gives each build a unique plugin path"))
			}
		case h != pl:
			detail := "accepted by the runtime"
			if archLevel(k) {
				detail = fmt.Sprintf("the plugin only runs on CPUs that support %s=%s", k, pl)
			}
			p.add(warnf(k, h, pl, detail))
			p.soft = append(p.soft, fmt.Sprintf("%s (host %s, plugin %s)", k, orNone(h), orNone(pl)))
		}
	}
}

func (p *preflight) packages() {
	if !p.hashesKnown {
		detail := "the host's package hashes are unknown"
		if len(p.pf.PackageHashes) == 0 {
			detail = "the plugin has no package hashes (built by an older Go?)"
		}
		p.add(Finding{Severity: SeverityWarning, Check: "package hashes", Detail: detail + "; the checks above stand in for them"})
		return
	}
	var open []string
	for _, pkg := range p.diff {
		if !p.explained[pkg] {
			open = append(open, pkg)
		}
	}
	if len(open) == 0 || p.settingsExplain {
		return
	}
	f := Finding{Severity: SeverityError, Check: "package hashes",
		Detail: fmt.Sprintf("%s: compiled differently from the host's copy, so plugin.Open refuses the plugin (\"plugin was built with a different version of package …\")", listPackages(open))}
	switch {
	case len(p.soft) > 0:
		f.Fix = "rebuild with the host's settings, which differ in " + strings.Join(p.soft, ", ") + "; " + viaBuild
	default:
		f.Fix = "build the plugin from the sources the host was built from (a replace directive, an edited module cache or, without -trimpath, another source directory all change the hashes); " + viaBuild + " (pass --gatehouse-src with the directory gatehouse was built from)"
	}
	p.add(f)
}

func (p *preflight) libc() {
	hl, need := p.c.Libc, p.pf.Libc
	for _, lib := range need.Libraries {
		if strings.Contains(lib, "musl") && (hl == nil || hl.Name != "musl") {
			p.add(errorf("libc", libcString(hl), lib, "build the plugin against glibc, like the host (the gatehouse plugin builder image does)"))
		}
	}
	if hl == nil || hl.Name != "glibc" || hl.Version == "" || need.GLIBC == "" {
		return
	}
	if compareDotted(glibcNumber(need.GLIBC), hl.Version) > 0 {
		p.add(errorf("libc", libcString(hl), "needs "+need.GLIBC,
			fmt.Sprintf("build the plugin on a system whose glibc is not newer than %s, such as the gatehouse plugin builder image (the same Debian release as the server)", hl.Version)))
	}
}

func libcString(l *Libc) string {
	if l == nil {
		return "unknown"
	}
	return strings.TrimSpace(l.Name + " " + l.Version)
}

// packageDiff returns the sorted packages both sides have whose hashes differ.
func packageDiff(host, plugin map[string]string) []string {
	var diff []string
	for pkg, h := range plugin {
		if hh, ok := host[pkg]; ok && hh != h {
			diff = append(diff, pkg)
		}
	}
	sort.Strings(diff)
	return diff
}

// differ is "shared package p differs" or "3 shared packages (a, b, c) differ".
func differ(pkgs []string) string {
	if len(pkgs) == 1 {
		return "shared package " + pkgs[0] + " differs"
	}
	return listPackages(pkgs) + " differ"
}

func listPackages(pkgs []string) string {
	const show = 5
	noun := "packages"
	if len(pkgs) == 1 {
		noun = "package"
	}
	if len(pkgs) <= show {
		return fmt.Sprintf("%d shared %s (%s)", len(pkgs), noun, strings.Join(pkgs, ", "))
	}
	return fmt.Sprintf("%d shared %s (%s and %d more)", len(pkgs), noun, strings.Join(pkgs[:show], ", "), len(pkgs)-show)
}
