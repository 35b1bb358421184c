package pipeline

import (
	"time"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// proxiesOf is the proxies stage of a with the virtual hosts the gate holds back
// replaced (see gate), and arms the timer that releases them at their bound.
func (p *Pipeline) proxiesOf(a translate.Accepted, now time.Time) []*translate.Proxy {
	var release time.Time
	a.VirtualHosts, release = p.gate.hosts(a.VirtualHosts, now)
	var crelease time.Time
	a.VirtualHosts, crelease = p.cgate.hosts(a.VirtualHosts, now)
	if release.IsZero() || (!crelease.IsZero() && crelease.Before(release)) {
		release = crelease
	}
	if !release.IsZero() {
		p.arm(release)
	}
	return p.proxies.of(a)
}

// arm makes the timer kick a release at t (the run lock held).
func (p *Pipeline) arm(t time.Time) {
	if now := time.Now(); p.timerAt.After(now) && p.timerAt.Before(t) {
		return // an earlier kick is due; its run arms what is still waiting
	}
	p.timerAt = t
	d := time.Until(t) + time.Millisecond
	if p.timer == nil {
		p.timer = time.AfterFunc(d, p.kick)
	} else {
		p.timer.Reset(d)
	}
}

func (p *Pipeline) kick() {
	select {
	case p.regate <- struct{}{}:
	default:
	}
}

// republishProxies makes the proxies stage of the last edge again, with what the gate
// releases now, and publishes every proxy role; extauth's resources are unchanged.
func (p *Pipeline) republishProxies() {
	p.run.Lock()
	defer p.run.Unlock()
	p.mu.Lock()
	edge, ext := p.rawEdge, p.xds[xds.RoleExtauth]
	p.mu.Unlock()
	if edge == nil {
		return
	}
	now := time.Now()
	proxies := p.proxiesOf(edge.Accepted, now)
	if p.gate.holdsFirst(now) {
		p.arm(p.gate.firstDue())
		return
	}
	out := make(map[string]xds.Resources, len(proxies)+1)
	out[xds.RoleExtauth] = ext
	var perr map[string]string
	for _, px := range proxies {
		r, changed := p.cache.Envoy(px)
		out[px.Role] = r
		if err := p.o.PublishChanged(px.Role, r, changed); err != nil {
			if perr == nil {
				perr = map[string]string{}
			}
			perr[px.Role] = err.Error()
			p.o.Log.Error().Str("role", px.Role).Err(err).Msg("xds: not published; the previous resources keep serving")
		}
	}
	p.retain.published()
	p.mu.Lock()
	p.xds, p.stages.XDS, p.stages.Proxies, p.stages.PublishErrors = out, nil, proxies, perr
	p.mu.Unlock()
}
