package xds

import (
	"github.com/rs/zerolog"
)

// cacheLogger hands go-control-plane's cache logs to zerolog. The caches log every
// watch they open at info level, which is debug detail here; Msgf on a disabled level
// does not format, which matters as some of those messages print every version known.
type cacheLogger struct{ log zerolog.Logger }

func (l cacheLogger) Debugf(format string, args ...any) { l.log.Trace().Msgf(format, args...) }
func (l cacheLogger) Infof(format string, args ...any)  { l.log.Debug().Msgf(format, args...) }
func (l cacheLogger) Warnf(format string, args ...any)  { l.log.Warn().Msgf(format, args...) }
func (l cacheLogger) Errorf(format string, args ...any) { l.log.Error().Msgf(format, args...) }
