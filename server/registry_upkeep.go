package server

import (
	"context"
	"slices"
	"time"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
)

// RetryInterval is how often RetryRejectedEvery tries again the AuthConfigs that failed
// to build, so a provider or plugin that was down or missing at start is picked up by
// itself.
const RetryInterval = 30 * time.Second

// UsesPluginFile says whether cfg has a plugin step loading one of files (plugin file
// names, as the plugin folder's watcher reports them).
func UsesPluginFile(cfg *extauthv1.ExtAuthConfig, files []string) bool {
	for _, st := range cfg.GetSteps() {
		if p := st.GetPluginAuth(); p != nil && slices.Contains(files, p.GetPluginFileName()) {
			return true
		}
	}
	return false
}

// RebuildPlugins builds again the configs with a plugin step loading one of files.
func (r *Registry) RebuildPlugins(files []string) []Status {
	return r.Rebuild(func(cfg *extauthv1.ExtAuthConfig) bool { return UsesPluginFile(cfg, files) })
}

// UnusedPluginFiles are those of files that no config given names in a plugin step.
func (r *Registry) UnusedPluginFiles(files []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(files), func(file string) bool {
		return slices.ContainsFunc(r.wanted, func(cfg *extauthv1.ExtAuthConfig) bool { return UsesPluginFile(cfg, []string{file}) })
	})
}

// RetryRejectedEvery runs RetryRejected every interval while a config is Rejected, and
// hands report what it returns, until ctx ends.
func (r *Registry) RetryRejectedEvery(ctx context.Context, interval time.Duration, report func([]Status)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if slices.ContainsFunc(r.Statuses(), func(s Status) bool { return s.State == StateRejected }) {
				report(r.RetryRejected())
			}
		}
	}
}
