package main

import (
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/state"
)

// openState loads the state file at path (written by the last run of the control
// plane) and returns it with the Saver that keeps it up to date; nil, nil when path is
// "". A file that cannot be read is logged and replaced at the first run: the control
// plane then starts as it would without one.
func openState(log zerolog.Logger, path, root, sourceName string) (*state.Memory, *state.Saver) {
	if path == "" {
		log.Info().Msg("state: none: a restart serves only what decodes and validates then")
		return nil, nil
	}
	f := &state.File{Path: path, Root: root, Source: sourceName}
	mem, err := f.Load()
	if err != nil {
		log.Error().Err(err).Msg("state: not read; starting without it")
		mem = nil
	} else {
		log.Info().Str("file", path).Int("resources", mem.Len()).Msg("state: what served before the restart is remembered")
	}
	return mem, &state.Saver{File: f, Log: log}
}
