package server

import (
	"os"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/loader"
)

// WarnPluginVersions is how many loaded plugin versions the server takes without a
// warning. Go cannot unload a plugin: every version opened (a hot reload of a rebuilt
// file) stays in memory, a few MB each, until the process ends.
const WarnPluginVersions = 20

// PluginOpened is the loader's Opened hook: it logs every plugin version opened, warns
// past WarnPluginVersions, and past max (when max > 0) calls notServing once, so the
// orchestrator's health probes take the process out of rotation and replace it.
func PluginOpened(log zerolog.Logger, max int, notServing func()) func(file, sum string, versions int) {
	return func(file, sum string, versions int) {
		log.Info().Str("file", file).Str("sha256", sum).Int("versions_loaded", versions).Msg("plugin version opened")
		if versions > WarnPluginVersions {
			log.Warn().Int("versions_loaded", versions).
				Msg("many plugin versions loaded: Go cannot unload plugins, each stays in memory until the process restarts; roll the pod when convenient (--max-plugin-versions does it by health checks)")
		}
		if max > 0 && versions == max+1 {
			log.Warn().Int("versions_loaded", versions).Int("max_plugin_versions", max).
				Msg("more plugin versions loaded than --max-plugin-versions: reporting NOT_SERVING to health checks so the process is replaced; Checks are still answered")
			notServing()
		}
	}
}

// RemoveStalePluginCopies removes the private plugin copies of servers that died
// without cleaning up (a clean stop removes its own).
func RemoveStalePluginCopies(log zerolog.Logger) {
	removed, err := loader.RemoveStale(os.TempDir())
	for _, dir := range removed {
		log.Info().Str("path", dir).Msg("removed the private plugin copies of a server that is gone")
	}
	if err != nil {
		log.Warn().Err(err).Msg("removing stale private plugin copies")
	}
}
