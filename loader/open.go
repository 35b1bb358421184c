package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"plugin"
)

// restartFix is the fix for a plugin path that is taken in this process.
const restartFix = "restart required (or rebuild with `gatehouse plugin build`, which gives each build a unique plugin path)"

// checkAndOpen runs the pre-flight and the trial load on a private copy of data and,
// when both pass, opens that copy.
func (l *Loader) checkAndOpen(path, sum string, data []byte, symbol string) (*opened, error) {
	copyPath, err := l.writeCopy(sum, data)
	if err != nil {
		return nil, fmt.Errorf("loader: %s: %w", path, err)
	}
	pf, findings := l.check.Preflight(copyPath)
	if pf != nil {
		loaded.mu.Lock()
		findings = append(findings, againstLoaded(pf)...)
		loaded.mu.Unlock()
	}
	if len(Errors(findings)) > 0 {
		return nil, l.refuse(sum, &Error{File: path, Findings: findings}, true)
	}
	var trial []Finding
	var res *TrialResult
	if !l.trialPassed(sum, symbol) {
		if ahead, ok := l.takeFailedAhead(path, sum, symbol); ok {
			trial, res = ahead.findings, ahead.res
		} else {
			trial, res = l.check.Trial.Run(context.Background(), path, copyPath, symbol, nil, false)
		}
		trial = withExports(trial, pf)
	}
	if len(Errors(trial)) > 0 {
		// Content that cannot be opened, or crashes, never will; a missing symbol or a
		// bad config type is a matter of the symbol asked for. A hang may be load.
		permanent := res != nil && (res.Stage == StageOpen || res.Stage == StageCrash)
		return nil, l.refuse(sum, &Error{File: path, Findings: append(findings, trial...)}, permanent)
	}
	return l.open(path, sum, copyPath, pf, Warnings(findings))
}

// open calls plugin.Open on the copy, one at a time in the process, rechecking what
// was opened meanwhile: the same content (by another Loader), or another content with
// the same plugin path.
func (l *Loader) open(path, sum, copyPath string, pf *PluginFile, warnings []Finding) (*opened, error) {
	loaded.open.Lock()
	defer loaded.open.Unlock()
	loaded.mu.Lock()
	if o := loaded.byHash[sum]; o != nil {
		loaded.mu.Unlock()
		return o, nil
	}
	late := againstLoaded(pf)
	loaded.mu.Unlock()
	if len(late) > 0 {
		return nil, l.refuse(sum, &Error{File: path, Findings: late}, true)
	}
	p, err := plugin.Open(copyPath)
	if err != nil {
		f := Finding{Severity: SeverityError, Check: "open",
			Detail: fmt.Sprintf("plugin.Open failed although the trial load passed: %v", err), Fix: restartFix}
		loaded.mu.Lock()
		loaded.poisoned[pf.PluginPath] = err
		loaded.mu.Unlock()
		return nil, l.refuse(sum, &Error{File: path, Findings: []Finding{f}}, true)
	}
	o := &opened{p: p, file: path, sum: sum, pluginPath: pf.PluginPath, copy: copyPath}
	host := l.hostHashes()
	loaded.mu.Lock()
	loaded.byHash[sum] = o
	if pf.PluginPath != "" {
		loaded.byPath[pf.PluginPath] = o
	}
	for pkg, h := range pf.PackageHashes {
		if _, inHost := host[pkg]; !inHost && pkg != pf.PluginPath {
			if _, taken := loaded.pkgs[pkg]; !taken {
				loaded.pkgs[pkg] = pkgOwner{hash: h, file: path}
			}
		}
	}
	versions := len(loaded.byHash)
	loaded.mu.Unlock()
	if l.opts.Warn != nil && len(warnings) > 0 {
		l.opts.Warn(path, warnings)
	}
	if l.opts.Opened != nil {
		l.opts.Opened(path, sum, versions)
	}
	return o, nil
}

func (l *Loader) refuse(sum string, err error, permanent bool) error {
	if permanent {
		l.mu.Lock()
		l.refused[sum] = err
		l.mu.Unlock()
	}
	return err
}

// againstLoaded checks pf against the plugins this process opened: the runtime refuses
// a second plugin path, and resolves a package the host lacks to the copy of the first
// plugin that brought it. loaded.mu is held.
func againstLoaded(pf *PluginFile) []Finding {
	var fs []Finding
	if o := loaded.byPath[pf.PluginPath]; pf.PluginPath != "" && o != nil {
		fs = append(fs, Finding{Severity: SeverityError, Check: "plugin path",
			Detail: fmt.Sprintf("another build with plugin path %q is already loaded (from %s, sha256 %.12s); a process cannot load two plugins with the same plugin path, so the loaded version keeps serving", pf.PluginPath, o.file, o.sum),
			Fix:    restartFix})
	}
	if err := loaded.poisoned[pf.PluginPath]; pf.PluginPath != "" && err != nil {
		fs = append(fs, Finding{Severity: SeverityError, Check: "plugin path",
			Detail: fmt.Sprintf("opening a plugin with plugin path %q failed earlier in this process (%v); opening it again could crash the process", pf.PluginPath, err),
			Fix:    restartFix})
	}
	for pkg, h := range pf.PackageHashes {
		if own, ok := loaded.pkgs[pkg]; ok && own.hash != h {
			fs = append(fs, Finding{Severity: SeverityError, Check: "package " + pkg,
				Detail: fmt.Sprintf("differs from the copy in the already loaded plugin %s (loaded plugins share packages the host does not have; the first one wins)", own.file),
				Fix:    "build both plugins with the same version of the module that provides it, or restart"})
		}
	}
	return fs
}

func (l *Loader) hostHashes() map[string]string {
	if c, err := l.check.contract(); err == nil {
		return c.PackageHashes
	}
	return nil
}

// writeCopy writes data to <PrivateDir>/<sha256>.so unless it is there already. The
// name is the content, so an existing file is never rewritten.
func (l *Loader) writeCopy(sum string, data []byte) (string, error) {
	dir := l.opts.PrivateDir
	if err := l.lockPrivateDir(dir); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, sum+".so")
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	tmp, err := os.CreateTemp(dir, ".incoming-*")
	if err != nil {
		return "", fmt.Errorf("copying the plugin: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("copying the plugin: %w", err)
	}
	if err := tmp.Chmod(0o500); err != nil {
		tmp.Close()
		return "", fmt.Errorf("copying the plugin: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("copying the plugin: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("copying the plugin: %w", err)
	}
	return dst, nil
}
