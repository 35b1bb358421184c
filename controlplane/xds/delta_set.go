package xds

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"sync"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// deltaSet answers every delta watch of one role and type: those that subscribe to
// every resource (extauth, and a gateway proxy for clusters and listeners) and those
// that name what they want (a gateway proxy's endpoints and route configurations).
// go-control-plane's LinearCache compares each of its resources (or each name a
// client subscribed to) with what the client knows on every change and on every
// ACK, and registers a named watch under each of its names: a lookup per resource
// per client per edit. deltaSet keeps a log of the names changed and, for each
// response it sent on a stream, the point of the log that response brought the
// client to; the stream's next watch, while its subscription is unchanged, looks at
// the names changed since, and nothing else, and an open watch is one entry however
// many names it subscribes to.
//
// The client's known versions are go-control-plane's (the subscription's returned
// resources, which the server sets to the NextVersionMap of each response sent); a
// watch whose subscription changed, or that deltaSet did not answer last, is
// compared in full, as LinearCache does, and a named watch is answered as
// LinearCache answers it (TestNamedWatchesAnswerAsLinearCache).
type deltaSet struct {
	typeURL string
	prefix  string // of the system version, as the LinearCache's

	mu        sync.Mutex
	seq       uint64 // changes made
	resources map[string]wireResource
	log       []logged // names changed, oldest first; holds the changes after logFrom
	logFrom   uint64
	sent      map[chan cachev3.DeltaResponse]sentMark // by stream
	watches   map[*setWatch]struct{}
	table     *versionTable // of change seq, once a wildcard stream was brought to it
	handed    *handedTables // where the books find the table a response was sent with
	stamp     uint64        // of the last comparison with what a client announced (allAnnounced)
	// digest is of what was served at change digestAt (servedDigest), once made.
	digest               digest
	digestOK, digestMade bool
	digestAt             uint64
}

// versionTable is the version of every resource a set served after one change, in a
// map that is never modified once made. Each wildcard stream the set brings up to that
// change holds the same table as its known versions (go-control-plane's returned
// resources), where a map of its own would repeat every name and version once per
// client; the books keep it as what the client acknowledged.
type versionTable struct {
	seq uint64
	m   map[string]string
}

// handedTables are the version tables sent with responses, from the set that made each
// response until the books take them (callbacks.OnStreamDeltaResponse).
type handedTables struct {
	mu sync.Mutex
	m  map[*discovery.DeltaDiscoveryResponse]*versionTable
}

// maxHanded bounds handedTables: a response whose stream ended before it was sent
// is never taken. A table forgotten is no error: the books then keep a map of their own.
const maxHanded = 1 << 14

func (h *handedTables) put(resp *discovery.DeltaDiscoveryResponse, t *versionTable) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHanded {
		h.m = map[*discovery.DeltaDiscoveryResponse]*versionTable{}
	}
	h.m[resp] = t
}

func (h *handedTables) take(resp *discovery.DeltaDiscoveryResponse) *versionTable {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.m[resp]
	delete(h.m, resp)
	return t
}

// current is the version table of what is served now (w.mu held): the last one
// copied with the names changed since, or, past the log, made anew.
func (w *deltaSet) current() *versionTable {
	if w.table != nil && w.table.seq == w.seq {
		return w.table
	}
	var m map[string]string
	if w.table != nil && w.table.seq >= w.logFrom {
		m = maps.Clone(w.table.m)
		for i := len(w.log) - 1; i >= 0 && w.log[i].seq > w.table.seq; i-- {
			name := w.log[i].name
			if r, ok := w.resources[name]; ok {
				m[r.name] = r.version()
			} else {
				delete(m, name)
			}
		}
	} else {
		m = make(map[string]string, len(w.resources))
		for _, r := range w.resources {
			m[r.name] = r.version()
		}
	}
	w.table = &versionTable{seq: w.seq, m: m}
	return w.table
}

// maxLog is how many changed names the log keeps; a client further behind is
// compared in full.
const maxLog = 4096

// wireResource is a resource and its version. The discovery.Resource responses carry
// it in is built when it is first sent, from its serialization (raw, or made then),
// and then shared by every response to every stream until the resource changes: a
// version is serialized and wrapped once for all clients, never once per client.
// Sharing is safe because nothing modifies a response's resources once built, and
// protobuf messages may be marshaled concurrently.
type wireResource struct {
	name    string // the set's own copy, which interned names share
	res     types.Resource
	version func() string // the content hash, as go-control-plane's caches compute it
	raw     []byte        // res serialized, when it already was; nil otherwise
	sent    *discovery.Resource
	seen    *uint64 // the stamp of the last announcement that named it (allAnnounced)
}

type logged struct {
	seq  uint64
	name string
}

// sentMark identifies the versions map a response made the client's (the map itself
// is go-control-plane's subscription's; while the subscription is wildcard only
// deltaSet's responses replace it) with its size, and the change it brought it to.
type sentMark struct {
	known uintptr
	n     int
	seq   uint64
	// covers says the client subscribed to every name served then (as Envoy subscribes
	// to the endpoints of every cluster), so it holds the version table.
	covers bool
}

type setWatch struct {
	req *discovery.DeltaDiscoveryRequest
	sub cachev3.Subscription
	ch  chan cachev3.DeltaResponse
	// known, when set, is what the client holds instead of the subscription's returned
	// resources: those, with the names it unsubscribed from taken out as
	// go-control-plane would have (unsubscribe).
	known map[string]string
	// announced, on a stream's first request of the type, is what the client announced
	// it holds (the subscription's returned resources are empty then).
	announced announced
}

func newDeltaSet(typeURL, prefix string, handed *handedTables) *deltaSet {
	return &deltaSet{typeURL: typeURL, prefix: prefix, resources: map[string]wireResource{}, handed: handed,
		sent: map[chan cachev3.DeltaResponse]sentMark{}, watches: map[*setWatch]struct{}{}}
}

// update makes upsert and remove what is served and answers the open watches.
func (w *deltaSet) update(upsert map[string]wireResource, remove []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	for name, r := range upsert {
		if old := w.resources[name].sent; old != nil {
			sharedRecords.forget(old)
		}
		r.name, r.seen = name, new(uint64)
		w.resources[name] = r
		w.log = append(w.log, logged{w.seq, name})
	}
	for _, name := range remove {
		if old := w.resources[name].sent; old != nil {
			sharedRecords.forget(old)
		}
		delete(w.resources, name)
		w.log = append(w.log, logged{w.seq, name})
	}
	if len(w.log) > maxLog {
		cut := len(w.log) - maxLog/2
		w.logFrom = w.log[cut-1].seq
		for cut < len(w.log) && w.log[cut].seq == w.logFrom {
			cut++ // a change is kept whole or not at all
		}
		w.log = append([]logged(nil), w.log[cut:]...)
	}
	var errs []error
	for wt := range w.watches {
		sent, err := w.respond(wt, false)
		if err != nil {
			errs = append(errs, err)
		}
		if sent {
			delete(w.watches, wt)
		}
	}
	return errors.Join(errs...)
}

// createWatch answers req now when the client misses something (or this is its first
// request), else when it does. change is what req did to the names the stream
// subscribed to (sub's subscribed resources are those, callbacks.keepNames); the names
// it unsubscribed from leave what the client holds in a copy, as sub's returned
// resources may be a version table other streams share.
func (w *deltaSet) createWatch(req *cachev3.DeltaRequest, sub cachev3.Subscription, ch chan cachev3.DeltaResponse, change nameChange) (func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if change.changed || len(req.GetResourceNamesSubscribe()) > 0 || len(req.GetResourceNamesUnsubscribe()) > 0 {
		delete(w.sent, ch) // the subscription's known versions may have been edited
	}
	wt := &setWatch{req: req, sub: sub, ch: ch}
	evenIfEmpty := sub.IsWildcard() && req.GetResponseNonce() == ""
	if w.typeURL == VirtualHostType && (change.first || change.changed) {
		// A proxy's route configuration waits for its first VHDS answer, and may well
		// have no virtual host: answered even when there is nothing to send.
		evenIfEmpty = true
	}
	if a := takeAnnounced(req); a != nil && change.first {
		// Answered even when up to date: the response makes what it holds the stream's.
		wt.announced, evenIfEmpty = a, true
	}
	if len(change.unsubscribed) > 0 {
		var dropped bool
		wt.known, dropped = unsubscribe(sub, change.unsubscribed)
		// What the client holds changed: a response, even empty, makes it the stream's.
		evenIfEmpty = evenIfEmpty || dropped
	}
	if sent, err := w.respond(wt, evenIfEmpty); err != nil || sent {
		return func() {}, err
	}
	w.watches[wt] = struct{}{}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.watches, wt)
	}, nil
}

// respond sends wt what its client misses, if anything (or anyway when evenIfEmpty),
// and says whether it sent.
func (w *deltaSet) respond(wt *setWatch, evenIfEmpty bool) (bool, error) {
	known := wt.known
	if known == nil && wt.announced == nil {
		known = wt.sub.ReturnedResources()
	}
	var changed []missed
	var removed []string
	var err error
	incremental, covers, compared := false, false, false
	if m, ok := w.sent[wt.ch]; ok && m.seq >= w.logFrom && known != nil && m.known == mapAddr(known) && len(known) == m.n {
		incremental, compared = true, true
		changed, removed, covers, err = w.since(m.seq, m.covers, known, wt.sub)
	} else if wt.announced != nil {
		changed, removed, covers, compared = w.allAnnounced(wt.announced, wt.sub)
		if !compared {
			known = wt.announced.versions()
		}
	}
	if !compared {
		changed, removed, covers, err = w.all(known, wt.sub)
	}
	if err != nil {
		return false, fmt.Errorf("xds: %s: %w", w.typeURL, err)
	}
	if len(changed) == 0 && len(removed) == 0 && !evenIfEmpty {
		return false, nil
	}
	resp := &discovery.DeltaDiscoveryResponse{TypeUrl: w.typeURL, SystemVersionInfo: w.prefix + strconv.FormatUint(w.seq, 10),
		RemovedResources: removed, Resources: make([]*discovery.Resource, 0, len(changed))}
	for _, c := range changed {
		out, err := w.wire(c.name)
		if err != nil {
			return false, err
		}
		resp.Resources = append(resp.Resources, out)
	}
	// next becomes the subscription's returned resources. A wildcard client now holds
	// what is served, and so does a named one subscribed to every name served: the
	// current version table, shared. Any other gets a map of its own: the
	// subscription's when only the changes were looked at (the server hands it back
	// with the next request, and nothing reads it meanwhile: the stream's watch is
	// cancelled before its subscription is), a copy otherwise.
	var next map[string]string
	if wt.sub.IsWildcard() || covers {
		table := w.current()
		next = table.m
		w.handed.put(resp, table)
	} else {
		next = known
		if !incremental || wt.known != nil || next == nil {
			next = w.ownCopy(known)
		}
		for _, c := range changed {
			next[c.name] = c.version
		}
		for _, name := range removed {
			delete(next, name)
		}
	}
	w.sent[wt.ch] = sentMark{known: mapAddr(next), n: len(next), seq: w.seq, covers: covers}
	if len(w.sent) > 4*maxLog { // streams gone: forget them all, the next watch of each is compared in full
		clear(w.sent)
	}
	wt.ch <- &cachev3.DeltaPassthroughResponse{DeltaRequest: wt.req, NextVersionMap: next, DeltaDiscoveryResponse: resp}
	return true, nil
}

// unsubscribe is what the client of sub holds once it unsubscribed from names, by
// go-control-plane's rule (Subscription.UpdateResourceSubscriptions), in a copy;
// dropped says whether a name it held was dropped.
func unsubscribe(sub cachev3.Subscription, names []unsubscribed) (known map[string]string, dropped bool) {
	known = maps.Clone(sub.ReturnedResources())
	if known == nil {
		known = map[string]string{}
	}
	for _, u := range names {
		if u.was && u.wildcard {
			known[u.name] = "" // sent again, or removed, as for a client that never had it
		} else if _, ok := known[u.name]; ok {
			delete(known, u.name)
			dropped = true
		}
	}
	return known, dropped
}

// missed is a resource a client misses, with its version.
type missed struct{ name, version string }

// differs says whether the client's version v (was: it has one) is not r's.
func differs(name string, r wireResource, v string, was bool) (missed, bool, error) {
	version := r.version()
	if version == "" {
		return missed{}, false, fmt.Errorf("%s: marshaling failed", name)
	}
	return missed{name, version}, !was || v != version, nil
}

// since is what changed after seq, is subscribed to, and differs from known; covers
// says whether a named subscription still covers every name served, as it did at seq
// when covered (a name served since that it did not subscribe to is in the log).
func (w *deltaSet) since(seq uint64, covered bool, known map[string]string, sub cachev3.Subscription) (changed []missed, removed []string, covers bool, err error) {
	covers = covered
	seen := map[string]bool{}
	wildcard, subscribed := sub.IsWildcard(), sub.SubscribedResources()
	for i := len(w.log) - 1; i >= 0 && w.log[i].seq > seq; i-- {
		name := w.log[i].name
		if seen[name] {
			continue
		}
		seen[name] = true
		if !wildcard && !w.subscribedTo(subscribed, name) {
			if _, served := w.resources[name]; served {
				covers = false
			}
			continue
		}
		if err := w.compare(name, known, &changed, &removed); err != nil {
			return nil, nil, false, err
		}
	}
	return changed, removed, covers, nil
}

// all compares every resource (or, for a named subscription, every name subscribed)
// with known; covers says whether a named subscription covers every name served.
func (w *deltaSet) all(known map[string]string, sub cachev3.Subscription) (changed []missed, removed []string, covers bool, err error) {
	if !sub.IsWildcard() {
		return w.allNamed(known, sub.SubscribedResources())
	}
	for name, r := range w.resources {
		v, was := known[name]
		c, diff, err := differs(name, r, v, was)
		if err != nil {
			return nil, nil, false, err
		}
		if diff {
			changed = append(changed, c)
		}
	}
	for name := range known {
		if _, ok := w.resources[name]; !ok {
			removed = append(removed, name)
		}
	}
	return changed, removed, false, nil
}

// compare adds name to changed when what is served under it differs from what the
// client knows, or to removed when it is known but no longer served.
func (w *deltaSet) compare(name string, known map[string]string, changed *[]missed, removed *[]string) error {
	r, ok := w.resources[name]
	v, was := known[name]
	if !ok {
		if was {
			*removed = append(*removed, name)
		}
		return nil
	}
	c, diff, err := differs(r.name, r, v, was) // the set's string, which known keeps
	if err != nil {
		return err
	}
	if diff {
		*changed = append(*changed, c)
	}
	return nil
}

func mapAddr(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

// allNamed compares each name subscribed with known; a name known but no longer
// served, or no longer subscribed to, is removed.
func (w *deltaSet) allNamed(known map[string]string, subscribed map[string]struct{}) (changed []missed, removed []string, covers bool, err error) {
	if w.typeURL == VirtualHostType {
		return w.allInNamespaces(known, subscribed)
	}
	served := 0
	for name := range subscribed {
		if _, ok := w.resources[name]; ok {
			served++
		}
		if err := w.compare(name, known, &changed, &removed); err != nil {
			return nil, nil, false, err
		}
	}
	for name := range known {
		if _, ok := subscribed[name]; !ok {
			removed = append(removed, name)
		}
	}
	return changed, removed, served == len(w.resources), nil
}

// wire is the discovery.Resource of name as served now, built on first use.
func (w *deltaSet) wire(name string) (*discovery.Resource, error) {
	r := w.resources[name]
	if r.sent != nil {
		return r.sent, nil
	}
	b, err := r.raw, error(nil)
	if b == nil {
		b, err = serialized(r.res)
	}
	if err != nil {
		return nil, fmt.Errorf("xds: %s %s: marshaling: %w", w.typeURL, name, err)
	}
	r.sent = &discovery.Resource{Name: name, Version: r.version(), Resource: &anypb.Any{TypeUrl: w.typeURL, Value: b}}
	sharedRecords.offer(r.sent)
	w.resources[name] = r
	return r.sent, nil
}
