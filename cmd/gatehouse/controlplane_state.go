package main

import (
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/xds"

	"gatehouse.dev/gatehouse/controlplane/state"
)

// cpState is what the control plane keeps across restarts: the serving versions
// (mem, kept up to date by saver) and the roster of extauth replicas.
type cpState struct {
	mem      *state.Memory
	saver    *state.Saver
	replicas *state.Replicas
	// remembered are the replicas the roster held at the start; nil when it held
	// none (no roster yet, or one not read).
	remembered *[]string
}

// openState loads the state file at path (written by the last run of the control
// plane) and its roster of extauth replicas, and returns them with the Saver that
// keeps the file up to date; nil when path is "". A file that cannot be read is
// logged and replaced: the control plane then starts as it would without one.
func openState(log zerolog.Logger, path, root, sourceName string) *cpState {
	if path == "" {
		log.Info().Msg("state: none: a restart serves only what decodes and validates then")
		return nil
	}
	f := &state.File{Path: path, Root: root, Source: sourceName}
	mem, err := f.Load()
	if err != nil {
		log.Error().Err(err).Msg("state: not read; starting without it")
		mem = nil
	} else {
		log.Info().Str("file", path).Int("resources", mem.Len()).Msg("state: what served before the restart is remembered")
	}
	st := &cpState{mem: mem, saver: &state.Saver{File: f, Log: log}, replicas: &state.Replicas{Path: state.ReplicasPath(path)}}
	remembered, ok, err := st.replicas.Load(time.Now())
	switch {
	case err != nil:
		log.Error().Err(err).Msg("state: the roster of extauth replicas was not read; after this restart, new AuthConfigs wait the whole --extauth-ack-timeout")
	case ok:
		st.remembered = &remembered
		log.Info().Strs("replicas", remembered).Msg("state: extauth replicas that may be serving are remembered")
	}
	return st
}

// joined and left keep the roster of extauth replicas (nil-safe).
func (st *cpState) joined(log zerolog.Logger, role, node string) {
	if st == nil || role != xds.RoleExtauth {
		return
	}
	if err := st.replicas.Join(node, time.Now()); err != nil {
		log.Error().Err(err).Str("node", node).Msg("state: the roster of extauth replicas was not written; after a restart, new AuthConfigs will wait the whole --extauth-ack-timeout")
	}
}

func (st *cpState) left(log zerolog.Logger, role, node string) {
	if st == nil || role != xds.RoleExtauth {
		return
	}
	if err := st.replicas.Leave(node, time.Now()); err != nil {
		log.Error().Err(err).Str("node", node).Msg("state: the roster of extauth replicas was not written; after a restart, new AuthConfigs will wait the whole --extauth-ack-timeout")
	}
}

// memory is the serving versions remembered (nil-safe).
func (st *cpState) memory() *state.Memory {
	if st == nil {
		return nil
	}
	return st.mem
}
