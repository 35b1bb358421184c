// Package pipeline runs the control plane's stages on every Input a Source publishes:
// input → edge (validate) → proxies (translate) → xds (one set of resources per node
// role), and hands each role's resources to the xDS server. Each stage is kept for the
// admin endpoints.
//
// Translation is incremental: per-resource translations are remembered by content
// hash, so an edit re-translates only what it touches, and every unchanged resource is
// handed to Publish as the same message pointer as before.
//
// Wiring, in `gatehouse controlplane`:
//
//	srv := xds.NewServer(xds.Options{Log: log, OnNack: func(n xds.Nack) { p.RecordNack(n) }})
//	p := pipeline.New(pipeline.Options{Log: log, PublishChanged: srv.PublishChanged})
//	err := p.Run(ctx, &source.Dir{Path: dir, Log: log})
package pipeline

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Options configure a Pipeline.
type Options struct {
	Log zerolog.Logger
	// Publish hands one role's complete desired state to the xDS server. An error
	// means nothing of that call was published; it is logged and kept in Stages.
	Publish func(role string, r xds.Resources) error
	// PublishChanged, when set, is called instead of Publish and is also told, by
	// type, the names that may differ from the previous call for the role
	// (xds.Server.PublishChanged): an edit is then published without a look at every
	// resource of its type.
	PublishChanged func(role string, r xds.Resources, changed xds.Changed) error
	// OnSettings, when set, is called with the Settings in effect at the first run and
	// whenever they change (devMode, requestTimeout, extauthzServerRef), so what
	// depends on them changes without a restart.
	OnSettings func(translate.Settings)
	// Memory, when set, is what served before this process started (the state
	// store): at the first run, a resource whose version is rejected serves its
	// remembered version, as it would its last accepted one after a live edit.
	Memory source.Memory
	// OnServing, when set, is called after every run that changed a status, with the
	// serving version of every resource in key order, for the state store to keep.
	// The resources are shared: never modify them.
	OnServing func([]*source.Resource)
	// ExtauthAcked, when set, reports every connected extauth replica and the
	// ExtAuthConfigs it acknowledged (xds.Server.EachServing for xds.RoleExtauth and
	// xds.ExtAuthConfigType, which leaves out the replicas still building their first
	// config and answering no Check): a virtual host whose routes name a new AuthConfig then
	// reaches the proxies only once every replica has it, or after AckBound (default
	// DefaultAckBound). Call Acked whenever what they acknowledged changes.
	ExtauthAcked func(f func(node string, acked map[string]string))
	AckBound     time.Duration
	// Replicas, when set, are the extauth replicas that may have been serving before
	// this process started (state.Replicas.Load, when it knew): after a restart, a new
	// AuthConfig's routes wait until each of them is back and has acknowledged it,
	// not for the whole AckBound. Unset, nobody knows who may still be reconnecting.
	Replicas *[]string
	// ProxiesCaughtUp, when set, says whether every connected proxy acknowledged the
	// route configurations last published: an AuthConfig removed with the routes that
	// named it then stays served to extauth until it is true (or AckBound passed).
	// Call Acked whenever it may have become true.
	ProxiesCaughtUp func() bool
	// RemovalDrain is how long such an AuthConfig stays once the proxies caught up, for
	// the Checks of requests they routed before (default 1 s, at most AckBound).
	RemovalDrain time.Duration
	// ProxiesAcked, when set, reports every connected proxy and what it acknowledged
	// of typeURL (xds.Server.EachAcked for xds.DefaultProxyRole): a virtual host whose
	// routes send to a cluster new to the proxies then reaches them only once every
	// proxy has the cluster, and its endpoints when they come over EDS (or after
	// AckBound). Call Acked whenever what they acknowledged changes.
	ProxiesAcked func(typeURL string, f func(node string, acked map[string]string))
	// BookProxyAcks, when set, is told which clusters ProxiesAcked must report the
	// acknowledgements of (the clusters and endpoints the gate waits for), and when
	// it need not any longer (xds.Server.Book and Unbook, for both types).
	BookProxyAcks func(cluster string, on bool)
}

// Stages are the last run's stages. They are shared: never modify them. The xds stage
// holds ExtAuthConfigs with resolved OIDC client secrets, and input and edge hold the
// Secrets: whatever serves them redacts them.
type Stages struct {
	// Version counts the runs of this process (1 for the first); Time is when the
	// last run finished. The admin endpoints show both.
	Version uint64    `json:"version"`
	Time    time.Time `json:"time"`
	// Translate is how long the last run took to validate and translate (publishing
	// excluded).
	Translate time.Duration            `json:"translate"`
	Input     *source.Input            `json:"input"`
	Edge      *validate.Edge           `json:"edge"`
	Proxies   []*translate.Proxy       `json:"proxies"`
	XDS       map[string]xds.Resources `json:"xds"`
	// PublishErrors are the errors of Publish in the last run, by role.
	PublishErrors map[string]string `json:"publishErrors,omitempty"`
	// Nacks are the latest NACKs received, oldest first.
	Nacks []xds.Nack `json:"nacks,omitempty"`
}

// Pipeline runs the stages. Its methods are safe for concurrent use.
type Pipeline struct {
	o Options

	run     sync.Mutex // one run at a time
	valid   *validate.Validator
	cache   *translate.Cache
	proxies proxiesMemo
	sets    translate.Settings
	first   bool
	// logged holds the resources last logged as not Accepted.
	logged map[source.Key]bool

	mu      sync.Mutex               // guards what follows
	stages  Stages                   // its XDS is nil until Stages copies xds
	xds     map[string]xds.Resources // the last run's xds stage: maps the translation edits in place during a run
	rawEdge *validate.Edge           // the last edge, without client statuses
	nacks   nackBook

	gate     *gate // AuthConfigs new to extauth
	cgate    *gate // clusters new to the proxies
	eds      edsNames
	retain   retainer
	retained atomic.Int32  // len(retain.kept), read without the run lock
	regate   chan struct{} // a held virtual host or retained config may be released
	timer    *time.Timer   // releases held virtual hosts and retained configs at the bound
	timerAt  time.Time     // when timer fires
}

// New returns a Pipeline; nothing runs until Run or Apply.
func New(o Options) *Pipeline {
	if o.Publish == nil {
		o.Publish = func(string, xds.Resources) error { return nil }
	}
	if o.PublishChanged == nil {
		// Publish is handed a copy: the translation edits its maps in place and tells
		// only PublishChanged which names it edited, while Publish takes a map it was
		// handed before as unchanged.
		publish := o.Publish
		o.PublishChanged = func(role string, r xds.Resources, _ xds.Changed) error { return publish(role, cloneResources(r)) }
	}
	p := &Pipeline{o: o, valid: validate.New(), cache: translate.NewCache(), first: true, nacks: nackBook{}, regate: make(chan struct{}, 1)}
	p.gate = newGate(o.Log, o.AckBound, func(rt *translate.Route) string { return rt.AuthConfig }, "extauth replicas", hasIn(o.ExtauthAcked), extauthLag)
	var proxiesHave func(func(string, func(string) bool))
	if o.ProxiesAcked != nil {
		proxiesHave = p.proxiesHave
	}
	p.cgate = newGate(o.Log, o.AckBound, func(rt *translate.Route) string { return rt.Cluster }, "proxies", proxiesHave, proxyLag)
	p.cgate.book = o.BookProxyAcks
	p.gate.servedBefore = servedBefore(o.Memory)
	if o.Replicas != nil {
		p.gate.remembered, p.gate.rememberedKnown = *o.Replicas, true
	}
	drain := o.RemovalDrain
	if drain == 0 {
		drain = drainRetained
	}
	p.retain = retainer{bound: p.gate.bound, drain: min(drain, p.gate.bound), caughtUp: o.ProxiesCaughtUp}
	return p
}

// Held says whether the proxies are not given VirtualService id's current version yet
// because extauth replicas have not acknowledged an AuthConfig it names.
func (p *Pipeline) Held(id string) bool { return p.gate.isHeld(id) }

// Acked tells the pipeline that what the extauth replicas acknowledged changed (an
// ACK, a replica gone): virtual hosts held for them are published if they may be now.
// It never blocks; the publishing runs on Run's goroutine.
func (p *Pipeline) Acked() {
	if !p.gate.waiting() && !p.cgate.waiting() && p.retained.Load() == 0 && !p.gate.lagging() && !p.cgate.lagging() && !p.gate.holding() {
		return
	}
	select {
	case p.regate <- struct{}{}:
	default:
	}
}

// Run feeds every Input of src through the stages until ctx ends or src fails.
func (p *Pipeline) Run(ctx context.Context, src source.Source) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.Regate(ctx)
	return src.Run(ctx, p.Apply)
}

// Regate publishes held virtual hosts as they may be (Acked, or their bound passed)
// until ctx ends. Run runs it; a caller of Apply alone runs it beside.
func (p *Pipeline) Regate(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.regate:
			p.republishProxies()
			p.releaseRetained()
			p.refreshLag()
		}
	}
}

// Apply runs the stages on one Input and publishes every role's resources.
func (p *Pipeline) Apply(in *source.Input) {
	p.run.Lock()
	defer p.run.Unlock()
	start := time.Now()
	if p.first && p.o.Memory != nil {
		p.valid.Remembered, p.valid.RememberedSame = p.o.Memory.Get, p.o.Memory.Same
	}
	edge := p.valid.Validate(in)
	p.valid.Remembered, p.valid.RememberedSame = nil, nil // only what the first Input holds was serving before
	ext, extChanged := p.cache.ExtAuthConfigs(edge.ExtAuthConfigs)
	p.gate.offer(extChanged, func(id string) bool { _, ok := ext[id]; return ok }, start)
	p.offerClusters(edge.Accepted.Clusters, start)
	before := p.cgate.lastHosts()
	proxies := p.proxiesOf(edge.Accepted, start)
	ext, extChanged = p.retain.update(ext, extChanged, before, p.cgate.lastHosts(), p.rawEdgeLocked(), start)
	p.retained.Store(int32(len(p.retain.kept)))
	if at := p.retain.due(); !at.IsZero() {
		p.arm(at)
	}
	out := make(map[string]xds.Resources, len(proxies)+1)
	changed := make(map[string]xds.Changed, len(proxies)+1)
	out[xds.RoleExtauth] = xds.Resources{xds.ExtAuthConfigType: ext}
	changed[xds.RoleExtauth] = xds.Changed{xds.ExtAuthConfigType: extChanged}
	roles := []string{xds.RoleExtauth}
	held := p.gate.holdsFirst(start)
	if held {
		proxies = nil // published by Regate, once the replicas are back (holdsFirst)
		p.arm(p.gate.firstDue())
	}
	for _, px := range proxies {
		out[px.Role], changed[px.Role] = p.cache.Envoy(px)
		roles = append(roles, px.Role)
	}
	took := time.Since(start)

	// The edge NACKs are mapped onto is this run's before anything is published: a
	// client may NACK what it was just sent while the other roles are still being
	// published, and its NACK must find the resources it concerns.
	p.mu.Lock()
	p.rawEdge = edge
	p.mu.Unlock()

	// extauth first: a route naming a new config_id reaches Envoy after extauth has it.
	var perr map[string]string
	for _, role := range roles {
		if err := p.o.PublishChanged(role, out[role], changed[role]); err != nil {
			if perr == nil {
				perr = map[string]string{}
			}
			perr[role] = err.Error()
			p.o.Log.Error().Str("role", role).Err(err).Msg("xds: not published; the previous resources keep serving")
		}
	}
	if !held {
		p.retain.published()
	}
	p.logStatuses(edge)
	if p.o.OnServing != nil && (p.first || len(edge.Changed) > 0 || len(edge.Removed) > 0) {
		p.o.OnServing(p.valid.Serving())
	}

	p.mu.Lock()
	p.rawEdge = edge
	p.nacks.forget(edge)
	p.stages = Stages{Version: p.stages.Version + 1, Time: time.Now(), Translate: took, Input: in, Edge: p.clientStatuses(edge), Proxies: proxies, PublishErrors: perr, Nacks: p.nacks.list()}
	p.xds = out
	p.mu.Unlock()

	if s := edge.Accepted.Settings; p.first || s != p.sets {
		p.first, p.sets = false, s
		p.o.Log.Info().Str("settings", s.String()).Msg("settings in effect")
		if p.o.OnSettings != nil {
			p.o.OnSettings(s)
		}
	}
}

// Stages returns the last run's stages. Its xds stage is a copy, made by the first
// call after a run (the translation edits the maps it hands the xDS server in place,
// so that an edit costs what it touches), and waits for a run in progress: what needs
// no xds stage asks Overview, which does neither.
func (p *Pipeline) Stages() Stages {
	p.run.Lock()
	defer p.run.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stages.XDS == nil && p.xds != nil {
		p.stages.XDS = make(map[string]xds.Resources, len(p.xds))
		for role, r := range p.xds {
			p.stages.XDS[role] = cloneResources(r)
		}
	}
	return p.stages
}

// Overview returns the last run's stages without the xds stage (XDS is nil), at once.
func (p *Pipeline) Overview() Stages {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stages
	st.XDS = nil
	return st
}

// cloneResources is a copy of r whose maps of each type are copies too.
func cloneResources(r xds.Resources) xds.Resources {
	out := make(xds.Resources, len(r))
	for typ, m := range r {
		out[typ] = maps.Clone(m)
	}
	return out
}

// logStatuses logs every status that changed: Warnings and Rejections when they appear
// or change, and the resources that are Accepted again.
func (p *Pipeline) logStatuses(edge *validate.Edge) {
	if p.logged == nil {
		p.logged = map[source.Key]bool{}
	}
	for _, k := range edge.Removed {
		delete(p.logged, k)
	}
	for _, r := range edge.Changed {
		st := r.Statuses[0]
		if st.State == validate.Accepted {
			if p.logged[r.Key()] {
				delete(p.logged, r.Key())
				p.o.Log.Info().Str("resource", r.Key().String()).Str("origin", r.Origin).Msg("Accepted")
			}
			continue
		}
		p.logged[r.Key()] = true
		ev := p.o.Log.Warn()
		if st.State == validate.Rejected {
			ev = p.o.Log.Error()
		}
		ev.Str("resource", r.Key().String()).Str("origin", r.Origin).Strs("reasons", st.Reasons).Msg(string(st.State))
	}
}
