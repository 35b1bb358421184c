package devgateway

import (
	"crypto/tls"
	"slices"
	"strings"
)

// listenerTable is what one listener serves: a table per filter chain.
type listenerTable struct {
	name   string
	tls    bool
	chains []*chainTable
}

type chainTable struct {
	serverNames []string
	cert        *tls.Certificate // nil for plain text
	t           *table
}

// chainFor picks a TLS listener's filter chain by server name as Envoy does: exact
// name, then the longest "*.suffix" wildcard, then the chain that names none.
func (lt *listenerTable) chainFor(sni string) *chainTable {
	if !lt.tls {
		return lt.chains[0]
	}
	sni = strings.ToLower(sni)
	var best, fallback *chainTable
	bestLen := 0
	for _, c := range lt.chains {
		if len(c.serverNames) == 0 && fallback == nil {
			fallback = c
		}
		for _, n := range c.serverNames {
			switch {
			case n == sni:
				return c
			case strings.HasPrefix(n, "*.") && strings.HasSuffix(sni, n[1:]) && len(n) > bestLen:
				best, bestLen = c, len(n)
			}
		}
	}
	if best != nil {
		return best
	}
	return fallback
}

// rebuild assembles every served port's listener and swaps in those that are complete.
// A listener waiting for something keeps serving its previous table, as Envoy keeps the
// old listener while the new one warms. Caller holds p.mu.
func (p *Proxy) rebuild() {
	inUse, checkers := map[string]bool{}, map[string]bool{}
	for _, port := range p.portList() {
		slot := p.ports[port]
		l := p.listenerOn(port)
		if l == nil {
			if old := slot.Swap(nil); old != nil {
				p.log.Info().Str("listener", old.name).Uint32("port", port).Msg("listener removed; port not served")
			}
			delete(p.waiting, port)
			continue
		}
		lt, missing := p.assemble(l)
		markInUse(lt, inUse, checkers) // a table warming keeps its connections and checks
		if len(missing) > 0 {
			msg := strings.Join(missing, ", ")
			if p.waiting[port] != msg {
				p.log.Info().Str("listener", l.name).Uint32("port", port).Str("waiting_for", msg).Bool("serving_previous", slot.Load() != nil).Msg("listener config incomplete")
			}
			p.waiting[port] = msg
			lt = slot.Load()
		} else {
			if old := slot.Swap(lt); old == nil || p.waiting[port] != "" {
				p.log.Info().Str("listener", l.name).Uint32("port", port).Msg("listener serving")
			}
			delete(p.waiting, port)
		}
		markInUse(lt, inUse, checkers)
	}
	p.pool.retain(inUse)
	p.retainCheckers(checkers)
}

func (p *Proxy) listenerOn(port uint32) *listenerSpec {
	for _, l := range p.listeners {
		if l.port == port {
			return l
		}
	}
	return nil
}

// assemble builds a listener's table, or says what is missing for it.
func (p *Proxy) assemble(l *listenerSpec) (*listenerTable, []string) {
	var missing []string
	lt := &listenerTable{name: l.name, tls: l.tls}
	for _, c := range l.chains {
		h := c.hcm
		rs := h.inline
		if rs == nil {
			if rs = p.routes[h.rds]; rs == nil {
				missing = append(missing, "route config "+h.rds)
				continue
			}
		}
		rs, ok := p.served(rs)
		if !ok {
			missing = append(missing, "virtual hosts (VHDS) of route config "+h.rds)
			continue
		}
		t := &table{clusters: map[string]*upstream{}, port: h.port, noRequestID: h.noRequestID}
		if rs.ignorePort {
			t.port = portStripAny
		}
		names := slices.Clone(rs.clusters)
		if h.authz != nil {
			names = append(names, h.authz.cluster)
		}
		if h.opts.jwt != nil {
			for _, ps := range h.opts.jwt.providers {
				names = append(names, ps.cluster)
			}
		}
		for i, name := range names {
			up, why := p.upstream(name)
			if why != "" {
				missing = append(missing, why)
				continue
			}
			isAuthz := h.authz != nil && i == len(rs.clusters) // names[len(rs.clusters)] is the ext_authz cluster
			if up.tls != nil && !isAuthz {
				// Only gRPC to extauth is dialled with the certificate folder; anything
				// else would go out in plain text.
				missing = append(missing, "cluster "+name+" with mutual TLS, which the gateway honours for the ext_authz server only")
				continue
			}
			if up.hc != nil {
				missing = append(missing, p.attachHealth(name, up)...)
			}
			t.clusters[name] = up
		}
		authzName := ""
		if a := h.authz; a != nil {
			authzName = a.name
			t.authz = &authzFilter{
				client: &clusterAuthz{name: a.cluster, up: t.clusters[a.cluster], pool: p.pool}, timeout: a.timeout,
				failureModeAllow: a.failureAllow, failureHeader: a.failureHeader, statusOnError: a.statusOnError,
				rawHeaders: a.rawHeaders,
			}
		}
		t.hosts = rs.vhosts(authzName, h.opts)
		missing = append(missing, p.resolveJWT(t, h.opts.jwt)...)
		ct := &chainTable{serverNames: c.serverNames, t: t}
		if c.secret != "" {
			if s := p.secrets[c.secret]; s == nil || s.cert == nil {
				missing = append(missing, "TLS certificate secret "+c.secret)
			} else {
				ct.cert = s.cert
			}
		}
		lt.chains = append(lt.chains, ct)
	}
	slices.Sort(missing)
	return lt, slices.Compact(missing)
}

// upstream returns the endpoints of a cluster, or what is missing for it.
func (p *Proxy) upstream(name string) (*upstream, string) {
	cs := p.clusters[name]
	if cs == nil {
		return nil, "cluster " + name
	}
	addrs := cs.addrs
	if cs.eds != "" {
		var ok bool
		if addrs, ok = p.endpoints[cs.eds]; !ok {
			return nil, "endpoints of cluster " + name
		}
	}
	return &upstream{addrs: addrs, http2: cs.http2, tls: cs.tls, hc: cs.hc}, ""
}

// resolveJWT gives each route of t with a jwt requirement its providers, each with the
// key set it shares with every provider fetching the same URI through the same cluster.
// It returns the key sets whose first fetch has not finished: the listener waits for
// them (started here; rebuild runs again when one finishes). Caller holds p.mu.
func (p *Proxy) resolveJWT(t *table, spec *jwtFilterSpec) []string {
	if spec == nil {
		return nil
	}
	built := map[string]*jwtProvider{}
	var missing []string
	provider := func(name string) *jwtProvider {
		if jp, ok := built[name]; ok {
			return jp
		}
		ps := spec.providers[name]
		if ps == nil {
			return nil
		}
		key := ps.uri + "|" + ps.cluster + "|" + ps.timeout.String() + "|" + ps.cacheFor.String()
		set := p.jwks[key]
		if set == nil {
			set = newJWKSSet(ps.uri, ps.cluster, ps.timeout, ps.cacheFor)
			p.jwks[key] = set
		}
		if up := t.clusters[ps.cluster]; up != nil {
			set.up.Store(up)
			if !set.firstFetchDone() {
				missing = append(missing, "key set "+ps.uri)
				set.startFirst(func() {
					p.mu.Lock()
					defer p.mu.Unlock()
					p.rebuild()
				})
			}
		}
		jp := &jwtProvider{name: name, issuer: ps.issuer, headers: ps.headers, keys: set, claims: ps.claims, payloadKey: ps.payloadKey, forward: ps.forward}
		built[name] = jp
		return jp
	}
	for _, v := range t.hosts {
		for _, r := range v.routes {
			if r.jwtReq == "" {
				continue
			}
			for _, n := range spec.reqs[r.jwtReq] {
				if jp := provider(n); jp != nil {
					r.jwt = append(r.jwt, jp)
				}
			}
		}
	}
	return missing
}
