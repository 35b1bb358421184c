package pipeline

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// DefaultAckBound is how long a new AuthConfig's routes wait for every extauth replica
// to acknowledge it before they are published anyway.
const DefaultAckBound = 5 * time.Second

// gate makes changes reach the data plane make-before-break across roles: a virtual
// host whose routes name an AuthConfig new to extauth is published to the proxies only
// once every connected extauth replica has acknowledged that AuthConfig (so its first
// request is answered by a replica that has it), or once the bound has passed. Until
// then the proxies keep the virtual host's last published version, or do not have it
// yet when it is new. Edits of an AuthConfig that routes already name need no wait: the
// routes do not change, and every replica answers with the old or the new version.
//
// The same gate, with ref naming a route's cluster and acked the proxies, holds a
// virtual host whose routes send to a cluster new to the proxies until every proxy
// has the cluster (and its endpoints, when they come over EDS).
type gate struct {
	log   zerolog.Logger
	bound time.Duration
	// ref is what a route names that the clients must have first (its AuthConfig's
	// config id, or its cluster); "" for nothing.
	ref func(*translate.Route) string
	// clients names the clients in the log ("extauth replicas", "proxies").
	clients string
	// acked reports, for every connected client, whether it has acknowledged each
	// id (for extauth, xds.Server.EachServing of the extauth role and type); nil:
	// nothing is held.
	acked func(f func(node string, has func(id string) bool))
	// book, when set, makes the clients' books keep the acknowledgements of id (on)
	// or forget them: what acked reports of a type they do not keep whole.
	book func(id string, on bool)

	mu sync.Mutex // guards pending: the acknowledgements come from stream goroutines
	// pending are the AuthConfigs (config ids) offered to extauth and not yet known to
	// be acknowledged by every replica, with when they were first offered.
	pending map[string]time.Time

	// served are the config ids extauth is served (the run lock guards it), and last
	// the virtual hosts last handed to the proxies.
	served map[string]bool
	last   chunked.List[*translate.VirtualHost]
	// held counts the virtual hosts the last gating held back; heldNames names them.
	held      int
	heldNames map[string]bool
	// offered is false until the first run's configs were offered.
	offered bool
	// nacked are the pending config ids an extauth replica rejected: their routes are
	// held past the bound, until a new version of the config is offered.
	nacked map[string]bool
	// lag are the replicas that had not acknowledged a config when its bound passed.
	lag lagBook
	// servedBefore says whether a config id served before this process started (the
	// state file); nil: not known, and the first run holds nothing back.
	servedBefore func(id string) bool
	// restarted is set when the first run found configs that served before: the
	// replicas are reconnecting. started is when the first run's configs were offered.
	restarted bool
	started   time.Time
	// firstHeld is set while the proxies' first publish after a restart waits (holdsFirst).
	firstHeld bool
	// remembered are the clients that may have been serving before the restart, when
	// rememberedKnown: once each is connected again, none is still reconnecting.
	remembered      []string
	rememberedKnown bool
}

// nack notes that an extauth replica rejected the current version of config ids.
func (g *gate) nack(ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		if _, ok := g.pending[id]; ok {
			if g.nacked == nil {
				g.nacked = map[string]bool{}
			}
			g.nacked[id] = true
		}
	}
}

func newGate(log zerolog.Logger, bound time.Duration, ref func(*translate.Route) string, clients string,
	acked func(func(string, func(string) bool)), lag lagBook) *gate {
	if bound <= 0 {
		bound = DefaultAckBound
	}
	return &gate{log: log, bound: bound, ref: ref, clients: clients, acked: acked, lag: lag,
		pending: map[string]time.Time{}, served: map[string]bool{}}
}

// hasIn adapts a report of acknowledged maps (xds.Server.EachAcked) to gate.acked.
func hasIn(each func(func(string, map[string]string))) func(func(string, func(string) bool)) {
	if each == nil {
		return nil
	}
	return func(f func(string, func(string) bool)) {
		each(func(node string, acked map[string]string) {
			f(node, func(id string) bool { _, ok := acked[id]; return ok })
		})
	}
}

// offer notes the config ids whose ExtAuthConfig changed in a run: those now served
// that were not before are pending until every replica acknowledges them. The first
// run's are not, unless the run shows a restart (some of its configs served before):
// then those that did not serve before are pending too, and the proxies' first publish
// waits for them (holdsFirst). The replicas outlive a restart with the configs they
// had, and acknowledge them once back.
func (g *gate) offer(changed []string, served func(id string) bool, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	first := !g.offered
	g.offered = true
	if first {
		g.started = at
		for _, id := range changed {
			if g.servedBefore != nil && served(id) && g.servedBefore(id) {
				g.restarted, g.firstHeld = true, g.acked != nil
				break
			}
		}
	}
	for _, id := range changed {
		now := served(id)
		switch {
		case now && !g.served[id]:
			g.served[id] = true
			g.lag.drop(id)
			if g.acked != nil && (!first || g.restarted && !g.servedBefore(id)) {
				g.pending[id] = at
				g.booking(id, true)
			}
		case now && g.nacked[id]:
			delete(g.nacked, id) // a new version: wait for the replicas again
			g.pending[id] = at
		case !now:
			if _, ok := g.pending[id]; ok || g.lag.byID[id] != nil {
				g.booking(id, false)
			}
			g.lag.drop(id)
			delete(g.served, id)
			delete(g.pending, id)
			delete(g.nacked, id)
		}
	}
}

// reconnecting says whether, at t, extauth replicas may still be reconnecting after a
// restart: the bound has not passed since the first run, and the replicas remembered
// from before it (when known) are not all connected again. The gate knows only the
// replicas connected; one still reconnecting has no config new since it left.
func (g *gate) reconnecting(t time.Time) bool {
	if !g.restarted || !t.Before(g.started.Add(g.bound)) {
		return false
	}
	if !g.rememberedKnown || g.acked == nil {
		return true
	}
	connected := map[string]bool{}
	g.acked(func(node string, _ func(string) bool) { connected[node] = true })
	for _, node := range g.remembered {
		if !connected[node] {
			return true
		}
	}
	g.restarted = false // every replica that may have served is back
	return false
}

// holdsFirst says whether, at t, the proxies' first publish after a restart still
// waits: within the bound, while an AuthConfig the first run found new is pending (not
// yet acknowledged by every replica, those that may still be reconnecting included).
// The proxies keep what the control plane before the restart gave them meanwhile;
// publishing would serve the routes of new AuthConfigs before the replicas have them,
// or, holding those routes back, withdraw the ones that served just before the restart
// (the state file is written up to a second late). A first run with nothing new
// publishes at once. Once it says false, it always does.
func (g *gate) holdsFirst(t time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.firstHeld {
		return false
	}
	if t.Before(g.started.Add(g.bound)) && len(g.pending) > 0 {
		return true
	}
	g.firstHeld = false
	return false
}

// firstDue is when the bound ends the wait of the proxies' first publish.
func (g *gate) firstDue() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started.Add(g.bound)
}

// holding says whether the proxies' first publish waits (see holdsFirst), without
// judging whether it may go now.
func (g *gate) holding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstHeld
}

// releaseAt is when the bound releases the routes of pending config id, or, while
// replicas may be reconnecting, when that ends (they may be released then).
func (g *gate) releaseAt(id string, t time.Time) time.Time {
	if g.reconnecting(t) {
		return g.started.Add(g.bound)
	}
	return g.pending[id].Add(g.bound)
}

// ready says whether the routes naming config id may be published at t: it is not
// pending, or every connected client acknowledged it (and, for extauth, none may be
// reconnecting after a restart), or the bound has passed (then the clients that lag
// are logged and noted for the statuses).
func (g *gate) ready(id string, t time.Time) bool {
	since, ok := g.pending[id]
	if !ok {
		return true
	}
	var lagging []string
	g.acked(func(node string, has func(string) bool) {
		if !has(id) {
			lagging = append(lagging, node)
		}
	})
	switch {
	case len(lagging) == 0 && !g.reconnecting(t):
		delete(g.pending, id)
		g.booking(id, false)
		return true
	case g.nacked[id]:
		return false // rejected: the routes stay on what every replica serves
	case t.Sub(since) >= g.bound:
		sort.Strings(lagging)
		g.log.Warn().Str("id", id).Strs(g.clients, lagging).Dur("waited", t.Sub(since)).
			Msg(g.clients + " have not acknowledged what new routes name within the bound; the routes are published, and those clients fail them until they have it")
		delete(g.pending, id)
		g.lag.note(id, lagging)
		return true
	}
	return false
}

// clientStatuses returns edge with the Warnings of the replicas that lag on a config
// whose routes were published at the bound (see lagBook).
func (g *gate) clientStatuses(edge *validate.Edge) *validate.Edge {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lag.apply(edge, g.ref)
}

// refreshLag forgets the lagging replicas that acknowledged or disconnected since, and
// says whether any did.
func (g *gate) refreshLag() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	before := make([]string, 0, len(g.lag.byID))
	for id := range g.lag.byID {
		before = append(before, id)
	}
	changed := g.lag.refresh(g.acked)
	for _, id := range before {
		if g.lag.byID[id] == nil {
			g.booking(id, false)
		}
	}
	return changed
}

// booking tells the clients' books to keep (or stop keeping) which clients
// acknowledged id, while the gate waits for it or a client lags on it (g.mu held).
func (g *gate) booking(id string, on bool) {
	if g.book != nil {
		g.book(id, on)
	}
}

// lagging says whether a replica lags on a config published at its bound.
func (g *gate) lagging() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lag.byID) > 0
}

// hosts is vhs with every virtual host whose routes name a pending AuthConfig replaced
// by its last published version (left out when it had none), and the earliest time a
// held one is released by the bound (zero when none is held). vhs itself is returned
// when nothing is held, so the proxies stage finds the same list.
func (g *gate) hosts(vhs chunked.List[*translate.VirtualHost], t time.Time) (chunked.List[*translate.VirtualHost], time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.heldNames = 0, nil
	if g.settle(t); len(g.pending) == 0 {
		g.last = vhs
		return vhs, time.Time{}
	}
	var earliest time.Time
	hold := func(vh *translate.VirtualHost) bool {
		held := false
		for _, rt := range vh.Routes {
			if id := g.ref(rt); id != "" && !g.ready(id, t) {
				held = true
				if g.nacked[id] {
					continue // released by a new version, not by time
				}
				if d := g.releaseAt(id, t); earliest.IsZero() || d.Before(earliest) {
					earliest = d
				}
			}
		}
		return held
	}
	var b chunked.Builder[*translate.VirtualHost]
	var previous lastByName
	for vh := range vhs.Values() {
		if !hold(vh) {
			b.Append(vh)
			continue
		}
		g.held++
		if g.heldNames == nil {
			g.heldNames = map[string]bool{}
		}
		g.heldNames[vh.Name] = true
		if old := previous.find(g.last, vh.Name); old != nil && !hold(old) {
			b.Append(old)
		}
	}
	if g.held == 0 {
		g.last = vhs
		return vhs, time.Time{}
	}
	g.last = b.List()
	return g.last, earliest
}

// lastByName finds virtual hosts of the last list handed to the proxies by name: by
// looking through it for the first few (a change holds one or two back), then through
// a map of it.
type lastByName struct {
	looked int
	byName map[string]*translate.VirtualHost
}

// scanned is how many virtual hosts lastByName finds by a scan of the list before it
// makes a map of it.
const scanned = 8

func (f *lastByName) find(last chunked.List[*translate.VirtualHost], name string) *translate.VirtualHost {
	if f.looked++; f.looked <= scanned {
		for old := range last.Values() {
			if old.Name == name {
				return old
			}
		}
		return nil
	}
	if f.byName == nil {
		f.byName = make(map[string]*translate.VirtualHost, last.Len())
		for old := range last.Values() {
			f.byName[old.Name] = old
		}
	}
	return f.byName[name]
}

// settle forgets the pending ids that every connected client has acknowledged (while
// none may be reconnecting), as ready would on meeting them in a route, so that a
// gating after the last acknowledgement need not walk every virtual host. It leaves
// the ids still waiting, and those past the bound, to ready (g.mu held).
func (g *gate) settle(t time.Time) {
	if len(g.pending) == 0 || g.reconnecting(t) {
		return
	}
	for id := range g.pending {
		all := true
		g.acked(func(_ string, has func(string) bool) { all = all && has(id) })
		if all {
			delete(g.pending, id)
			g.booking(id, false)
		}
	}
}

// isHeld says whether the last gating held back the virtual host of VirtualService id.
func (g *gate) isHeld(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.heldNames[id]
}

// lastHosts are the virtual hosts last handed to the proxies.
func (g *gate) lastHosts() chunked.List[*translate.VirtualHost] {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

// waiting says whether the last gating held a virtual host back.
func (g *gate) waiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held > 0
}

// servedBefore is whether config id ("<namespace>.<name>") is an AuthConfig that m
// remembers; nil when m is.
func servedBefore(m source.Memory) func(string) bool {
	if m == nil {
		return nil
	}
	return func(id string) bool {
		ns, name, ok := strings.Cut(id, ".")
		if !ok {
			return false
		}
		_, ok = m.Origin(source.Key{APIVersion: apiv1.AuthConfigAPIVersion, Kind: apiv1.KindAuthConfig, Namespace: ns, Name: name})
		return ok
	}
}
