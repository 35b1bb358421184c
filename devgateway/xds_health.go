package devgateway

import "google.golang.org/grpc"

// attachHealth gives up, the health-checked cluster name, a health checker per endpoint,
// kept across config changes and started the first time an endpoint is seen, and
// returns what the listener waits for: the endpoints whose first check has not
// finished, as Envoy waits for one round of health checks before it serves. Caller
// holds p.mu.
func (p *Proxy) attachHealth(name string, up *upstream) []string {
	var missing []string
	up.health = make([]*endpointHealth, len(up.addrs))
	for i, addr := range up.addrs {
		key := poolKey(addr, up.tls) + "|" + up.hc.key()
		h := p.checkers[key]
		if h == nil {
			tls := up.tls
			h = newEndpointHealth(*up.hc, func() (*grpc.ClientConn, error) { return p.pool.get(addr, tls) }, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				if !p.closed {
					p.rebuild()
				}
			})
			h.key = key
			p.checkers[key] = h
		}
		up.health[i] = h
		if !h.firstCheckDone() {
			missing = append(missing, "first health check of "+addr+" in cluster "+name)
		}
	}
	return missing
}

// markInUse marks, in conns (poolKey), the connections the ext_authz clients and the
// health checks of lt (nil: none) use, and in checkers those health checks.
func markInUse(lt *listenerTable, conns, checkers map[string]bool) {
	if lt == nil {
		return
	}
	for _, c := range lt.chains {
		for _, up := range c.t.clusters {
			for i, h := range up.health {
				checkers[h.key] = true
				conns[poolKey(up.addrs[i], up.tls)] = true // the checks' connection
			}
		}
		if c.t.authz == nil {
			continue
		}
		if a, ok := c.t.authz.client.(*clusterAuthz); ok && a.up != nil {
			for _, addr := range a.up.addrs {
				conns[poolKey(addr, a.up.tls)] = true
			}
		}
	}
}

// retainCheckers stops the health checkers not in keep. Caller holds p.mu.
func (p *Proxy) retainCheckers(keep map[string]bool) {
	for key, h := range p.checkers {
		if !keep[key] {
			h.close()
			delete(p.checkers, key)
		}
	}
}
