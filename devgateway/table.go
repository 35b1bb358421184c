package devgateway

import (
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// table is what one listener serves, compiled and immutable once built: requests are
// matched against it without locks and a new config replaces it whole.
type table struct {
	hosts     []*vhost
	indexOnce sync.Once
	index     *hostIndex // hosts by domain, built at the first request
	clusters  map[string]*upstream
	// authz is the ext_authz filter; nil when the filter chain has none, and then no
	// request is checked (as in Envoy, per-route ext_authz settings mean nothing then).
	authz *authzFilter
	port  portMode
	// noRequestID leaves a request without x-request-id as it is
	// (generate_request_id false).
	noRequestID bool
}

// portMode says how the Host header's port takes part in virtual host matching.
type portMode int

const (
	// portKeep matches the Host header as sent, port included: Envoy's default.
	portKeep portMode = iota
	// portStripAny drops any port (strip_any_host_port, ignore_port_in_host_matching).
	portStripAny
	// portStripMatching drops the port when it is the port the request came in on
	// (strip_matching_host_port).
	portStripMatching
)

// authzFilter is the ext_authz HTTP filter of a listener.
type authzFilter struct {
	client           authv3.AuthorizationClient
	timeout          time.Duration
	failureModeAllow bool
	// failureHeader adds x-envoy-auth-failure-mode-allowed to a request let through
	// because ext_authz failed (failure_mode_allow_header_add).
	failureHeader bool
	statusOnError int
	// rawHeaders sends the headers as Envoy does with encode_raw_headers: in
	// header_map, one entry per header line, values as raw bytes, never joined.
	rawHeaders bool
}

type vhost struct {
	name    string
	domains []string
	routes  []*route
}

// matchKind is how a route matches the path.
type matchKind int

const (
	matchPrefix matchKind = iota
	matchPath
	matchSeparatedPrefix
)

type route struct {
	name     string
	kind     matchKind
	path     string
	fold     bool // case_sensitive false; path is lower case then
	cluster  string
	authz    bool              // false when ext_authz is disabled for the route
	ext      map[string]string // context extensions sent with the Check
	removeHd []string          // lower case
	extract  []extractRule     // header_to_metadata, nil for none
	lua      *luaStage         // the early-stage Lua data, nil for none
	jwtReq   string            // the jwt_authn requirement, "" for none
	jwt      []*jwtProvider    // its providers, any one of which must verify
	rbac     *rbacRules        // nil: no RBAC on the route
}

func (r *route) matches(path string) bool {
	if r.fold {
		path = strings.ToLower(path) // r.path is lower case already
	}
	switch r.kind {
	case matchPath:
		return path == r.path
	case matchSeparatedPrefix:
		return path == r.path || strings.HasPrefix(path, r.path+"/")
	default:
		return strings.HasPrefix(path, r.path)
	}
}

type upstream struct {
	addrs []string
	http2 bool         // the cluster speaks HTTP/2 (prior knowledge) to its endpoints
	tls   *mtls.Folder // mutual TLS to an extauth server; nil for plain text
	hc    *healthCheck // the cluster's health checking; nil for none
	// health is, for a health-checked cluster, each endpoint's checker (by index of
	// addrs; Proxy.attachHealth).
	health []*endpointHealth
	next   atomic.Uint64
}

// pick returns the next endpoint, round robin (only the healthy ones in a
// health-checked cluster), or "" when the cluster has none.
func (u *upstream) pick() string {
	if o := u.order(); len(o) > 0 {
		return u.addrs[o[0]]
	}
	return ""
}

// order is the indexes of addrs to try for one request: all of them from the next one,
// round robin, or in a health-checked cluster only the healthy ones.
func (u *upstream) order() []int {
	n := len(u.addrs)
	if n == 0 {
		return nil
	}
	start := int(u.next.Add(1)-1) % n
	out := make([]int, 0, n)
	for k := range n {
		i := (start + k) % n
		if u.health == nil || u.health[i].isHealthy() {
			out = append(out, i)
		}
	}
	return out
}

// match finds the virtual host for host and the first route whose path matches.
// local is the address the request came in on (for portStripMatching).
func (t *table) match(host, local, path string) (*route, bool) {
	if h, port, err := net.SplitHostPort(host); err == nil {
		_, localPort, _ := net.SplitHostPort(local)
		if t.port == portStripAny || (t.port == portStripMatching && port == localPort) {
			host = h
		}
	}
	vh := t.vhostFor(strings.ToLower(host))
	if vh == nil {
		return nil, false
	}
	for _, r := range vh.routes {
		if r.matches(path) {
			return r, true
		}
	}
	return nil, false
}

// vhostFor picks the virtual host with Envoy's precedence: exact domain, then the
// longest suffix wildcard ("*.example.com"), then the longest prefix wildcard
// ("example.*"), then "*". A wildcard never matches the empty string. Among virtual
// hosts with the same domain, the first wins. host is lower case.
func (t *table) vhostFor(host string) *vhost {
	t.indexOnce.Do(func() { t.index = indexHosts(t.hosts) })
	return t.index.lookup(host)
}

// hostIndex is a table's virtual hosts by domain, so that a request's host is found
// without a look at every virtual host: exact domains in a map, wildcards longest
// first.
type hostIndex struct {
	exact          map[string]*vhost
	suffix, prefix []wildcard // by length, longest first; the first of equals wins
	star           *vhost
}

// wildcard is a wildcard domain without its "*".
type wildcard struct {
	part string
	v    *vhost
}

func indexHosts(hosts []*vhost) *hostIndex {
	x := &hostIndex{exact: map[string]*vhost{}}
	for _, v := range hosts {
		for _, d := range v.domains {
			d = strings.ToLower(d)
			switch {
			case d == "*":
				if x.star == nil {
					x.star = v
				}
			case strings.HasPrefix(d, "*"):
				x.suffix = append(x.suffix, wildcard{d[1:], v})
			case strings.HasSuffix(d, "*"):
				x.prefix = append(x.prefix, wildcard{d[:len(d)-1], v})
			default:
				if _, ok := x.exact[d]; !ok {
					x.exact[d] = v
				}
			}
		}
	}
	longest := func(a, b wildcard) int { return len(b.part) - len(a.part) }
	slices.SortStableFunc(x.suffix, longest)
	slices.SortStableFunc(x.prefix, longest)
	return x
}

func (x *hostIndex) lookup(host string) *vhost {
	if v, ok := x.exact[host]; ok {
		return v
	}
	for _, w := range x.suffix {
		if len(host) > len(w.part) && strings.HasSuffix(host, w.part) {
			return w.v
		}
	}
	for _, w := range x.prefix {
		if len(host) > len(w.part) && strings.HasPrefix(host, w.part) {
			return w.v
		}
	}
	return x.star
}
