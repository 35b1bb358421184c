package server

import "strings"

// SourcePrefix starts the status id of the config source ("source:" + its path) in
// Statuses, beside the AuthConfigs; an AuthConfig id never contains ':'.
const SourcePrefix = "source:"

type sourceProblem struct {
	path string
	err  error
}

// SetSource records whether the config source at path can be applied: err says why
// not (a document that does not parse, the folder gone), nil that it can. While err is
// set, Statuses lists the source as Rejected, so `gatehouse extauth status` shows it
// and exits 1; every AuthConfig keeps serving its last good version.
func (r *Registry) SetSource(path string, err error) {
	if err == nil {
		r.source.Store(nil)
		return
	}
	r.source.Store(&sourceProblem{path: path, err: err})
}

// sourceStatus is the status entry of a source problem, if there is one.
func (r *Registry) sourceStatus() (Status, bool) {
	p := r.source.Load()
	if p == nil {
		return Status{}, false
	}
	return Status{
		ID:              SourcePrefix + p.path,
		State:           StateRejected,
		Reason:          "not applied, so no AuthConfig changes: " + p.err.Error(),
		ServingPrevious: len(*r.serving.Load()) > 0,
	}, true
}

// IsSource reports whether a status is that of the config source, not an AuthConfig.
func IsSource(s Status) bool { return strings.HasPrefix(s.ID, SourcePrefix) }
