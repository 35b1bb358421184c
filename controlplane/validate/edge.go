package validate

import (
	"sort"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// Edge is the edge stage: every input resource with its statuses, and what serves.
// It is never modified once returned; unchanged resources, and the chunks of its lists
// that hold only those, are shared between edges.
type Edge struct {
	// Resources are the input's resources, in its order, with their statuses.
	Resources chunked.List[*Resource] `json:"resources"`
	// Problems are the input's problems (what could not be read).
	Problems []source.Problem `json:"problems,omitempty"`
	// Accepted is what serves, the input of the proxies stage.
	Accepted translate.Accepted `json:"-"`
	// ExtAuthConfigs are the translations of the serving AuthConfigs, in key order:
	// what extauth is served (with resolved client secrets: never log them).
	ExtAuthConfigs chunked.List[*extauthv1.ExtAuthConfig] `json:"-"`
	// Changed are the resources whose version or status changed in this run, and
	// Removed the keys that left the input (for logs, and to forget client statuses).
	Changed []*Resource  `json:"-"`
	Removed []source.Key `json:"-"`
}

// Index is the position in Resources of the resource of k, found by a binary search
// (they are in key order), and whether it is there.
func (e *Edge) Index(k source.Key) (int, bool) {
	n := e.Resources.Len()
	i := sort.Search(n, func(i int) bool { return e.Resources.At(i).Key().Compare(k) >= 0 })
	return i, i < n && e.Resources.At(i).Key() == k
}

// ChangedSince calls f, in order, with every resource of e that old does not hold as
// it is: new, or with another version or status (resources are compared as pointers:
// an edge shares those that did not change with the one before it). Resources of old
// that e no longer holds are not reported. When no resource came or went, the lists
// are compared chunk by chunk (chunked.Changes: an edit costs the chunks it touched);
// otherwise both are walked in key order.
func (e *Edge) ChangedSince(old *Edge, f func(*Resource)) {
	var changed []*Resource
	shifted := false
	sameLength := chunked.Changes(old.Resources, e.Resources, func(_ int, o, r *Resource) {
		shifted = shifted || o.Key() != r.Key()
		changed = append(changed, r)
	})
	if sameLength && !shifted {
		for _, r := range changed {
			f(r)
		}
		return
	}
	i, n := 0, old.Resources.Len()
	for r := range e.Resources.Values() {
		for i < n && old.Resources.At(i) != r && old.Resources.At(i).Key().Compare(r.Key()) < 0 {
			i++ // gone from e
		}
		if i < n && old.Resources.At(i) == r {
			i++
			continue
		}
		f(r)
	}
}

// Validator computes the edge stage of successive Inputs. It remembers the last
// accepted version of every resource and, to be incremental, what each resource
// references and serves: an Input that differs from the previous one in a few
// resources re-validates those and what depends on them, nothing else.
//
// A Validator is not safe for concurrent use.
type Validator struct {
	// Full re-validates every resource on every run (tests compare it with the
	// incremental runs).
	Full bool
	// Remembered, when set, is what served before this process started (the state
	// store): a resource first seen with a version that is rejected serves its
	// remembered version instead, as a live edit keeps its last accepted one.
	Remembered func(source.Key) (*source.Resource, bool)
	// RememberedSame, when set with Remembered, says whether the remembered version of
	// a resource is its current content, so that it need not be decoded.
	RememberedSame func(*source.Resource) bool

	prev     source.Resources
	aligned  []*entry                       // the entries of prev, in its order
	users    userIndex                      // "<Kind> <id>" → entries referencing it
	clusters map[string]*translate.Cluster  // serving Upstreams by id
	acs      map[string]bool                // serving AuthConfigs by id
	secrets  map[string]*source.Resource    // Secrets by id
	owners   map[string]*entry              // lower-case domain → VirtualService serving it
	wanters  map[string]map[*entry]struct{} // lower-case domain → VirtualServices rejected for it
	// wanted are the lower-case domains each VirtualService was rejected for (few are:
	// a map here rather than a field of every entry).
	wanted map[*entry][]string
	// lastT are the translations of last accepted versions, by entry: needed only
	// while a rejected version has an accepted one before it, so made then.
	lastT    map[*entry]*translation
	settings translate.Settings
	started  bool
	// unresolved are the entries whose last field may still be remembered (see
	// lastOf); none is left after a run.
	unresolved []*entry
	edge       *Edge // the last output
	// dirty are the entries invalidated since the last output, and moved says
	// entries came or went since: output patches the last edge when they did not.
	dirty []*entry
	moved bool
	// patched counts the edges patched (for tests).
	patched int
}

// New returns a Validator that has seen nothing yet.
func New() *Validator {
	return &Validator{
		users:    userIndex{},
		clusters: map[string]*translate.Cluster{},
		acs:      map[string]bool{},
		secrets:  map[string]*source.Resource{},
		owners:   map[string]*entry{},
		wanters:  map[string]map[*entry]struct{}{},
		wanted:   map[*entry][]string{},
		lastT:    map[*entry]*translation{},
		settings: translate.DefaultSettings(),
	}
}

// entry is what the Validator knows of one resource.
type entry struct {
	// The versions are the Inputs' own resources, shared and never modified.
	res     *source.Resource // the current version
	last    *source.Resource // the last accepted version, nil when never accepted
	serving *source.Resource // the version serving, nil when none

	// The translation of the current version, by hash (that of the last accepted
	// version is in Validator.lastT).
	self translation
	// Serving results, by kind.
	cluster *translate.Cluster
	vh      *translate.VirtualHost
	ext     *extauthv1.ExtAuthConfig
	tls     *translate.TLSCert

	refs    []string // the user keys it is indexed under
	domains []string // lower-case domains it serves (VirtualService)
	reasons []string // of validation's status (its state is state)
	// out is e's view in the last edge, nil when it must be made again (invalidate);
	// pos is e's place in it, and slot its place in the edge's list of its kind.
	out     *Resource
	pos     int32
	slot    int32
	kind    outKind
	dirty   bool // in Validator.dirty
	removed bool
	state   stateCode // of validation's status, reported by ReportedBy
}

// stateCode is a State in a byte, so an entry (one per resource) fits the 224-byte size
// class of Go's allocator; a State would take it to the next.
type stateCode uint8

const (
	codeAccepted stateCode = iota
	codeWarning
	codeRejected
)

var stateOfCode = [...]State{codeAccepted: Accepted, codeWarning: Warning, codeRejected: Rejected}

// setStatus sets validation's status of e.
func (e *entry) setStatus(state State, reasons []string) {
	e.reasons = reasons
	switch state {
	case Accepted:
		e.state = codeAccepted
	case Warning:
		e.state = codeWarning
	default:
		e.state = codeRejected
	}
}

// status is validation's status of e.
func (e *entry) status() Status {
	return Status{State: stateOfCode[e.state], Reasons: e.reasons, ReportedBy: ReportedBy}
}

// accept makes the current version of e serve, and the last accepted one.
func (v *Validator) accept(e *entry, state State, warnings []string) {
	e.serving, e.last = e.res, e.res
	e.setStatus(state, warnings)
	v.invalidate(e)
}

// reject records why the current version of e is Rejected; serving is the last
// accepted version when it serves instead, else nil.
func (v *Validator) reject(e *entry, why []string, serving *source.Resource) {
	note := noteNever
	switch {
	case serving != nil:
		note = noteLastServes
	case v.lastOf(e) != nil:
		note = noteNotServed
	}
	e.serving = serving
	e.setStatus(Rejected, append(append([]string(nil), why...), note))
	v.invalidate(e)
}

// invalidate notes that e's view in the edge, or what it serves, may have changed:
// output makes it again. Nothing else may clear e.out, or output would miss it.
func (v *Validator) invalidate(e *entry) {
	e.out = nil
	if !e.dirty {
		e.dirty = true
		v.dirty = append(v.dirty, e)
	}
}

// resource is the edge's view of e.
func (e *entry) resource() *Resource {
	r := &Resource{Resource: e.res, Statuses: acceptedStatuses}
	if e.state != codeAccepted || e.reasons != nil {
		r.Statuses = []Status{e.status()}
	}
	if e.serving != nil {
		r.Serving = e.serving.Hash
	}
	return r
}

// lastTranslation is where the last accepted version's translation is kept.
func (v *Validator) lastTranslation(e *entry) *translation {
	t := v.lastT[e]
	if t == nil {
		t = &translation{}
		v.lastT[e] = t
	}
	return t
}

// lastVersion is the last accepted version of e when it differs from the current one.
func (v *Validator) lastVersion(e *entry) *source.Resource {
	if last := v.lastOf(e); last != nil && last.Hash != e.res.Hash {
		return last
	}
	return nil
}

// remembered marks an entry's last field as the version the state store remembers,
// not decoded yet.
var remembered = &source.Resource{}

// lastOf is e's last accepted version, the remembered one decoded when it is first
// needed.
func (v *Validator) lastOf(e *entry) *source.Resource {
	if e.last == remembered {
		switch {
		case v.Remembered == nil:
			e.last = nil
		case v.RememberedSame != nil && v.RememberedSame(e.res):
			e.last = e.res // the same content: what decoding it would compare equal to
		default:
			e.last, _ = v.Remembered(e.res.Key())
		}
	}
	return e.last
}

// resolveRemembered decodes the remembered versions a run left undecoded (those of
// entries it neither accepted nor rejected), while Remembered is still the one the
// run had.
func (v *Validator) resolveRemembered() {
	for _, e := range v.unresolved {
		v.lastOf(e)
	}
	v.unresolved = nil
}

// translation is a version's translation, remembered by key (hash, plus what else
// it depends on).
type translation struct {
	key      string
	cluster  *translate.Cluster
	vh       *translate.VirtualHost
	ext      *extauthv1.ExtAuthConfig
	settings *translate.Settings
	tls      *tlsCert
	err      error
}

// tlsCert is a TLS Secret's translation: rare, so a translation holds a pointer.
type tlsCert struct {
	cert     *translate.TLSCert
	warnings []string
}

func userKey(kind, id string) string { return kind + " " + id }
