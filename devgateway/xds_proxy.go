package devgateway

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Envoy listener ports the gateway serves by default: HTTP and HTTPS.
const (
	HTTPPort  uint32 = 8080
	HTTPSPort uint32 = 8443
)

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	Log zerolog.Logger
	// Ports are the Envoy listener ports served, each on a local address given to
	// Serve; a listener on any other port is refused. Default: HTTPPort and HTTPSPort.
	Ports []uint32
}

// Proxy is the gateway fed over xDS. Handle takes each type's resources as the xDS
// client receives them; a listener is served once everything it needs has arrived (its
// route configuration, the clusters its routes and ext_authz filter use, their
// endpoints, its TLS certificate), and every later change swaps in a new table whole.
// Until then its port answers 503. What it cannot honour is refused, never ignored.
type Proxy struct {
	log   zerolog.Logger
	eng   *engine
	pool  *connPool
	ports map[uint32]*atomic.Pointer[listenerTable]

	mu        sync.Mutex
	listeners map[string]*listenerSpec
	routes    map[string]*routeSpec
	vhosts    vhostMemo                        // the virtual hosts of routes, by their bytes
	vhds      map[string]*vhdsHost             // VirtualHost resources, by name
	vhdsOf    map[string][]*vhostSpec          // by route configuration, the VHDS virtual hosts of vhds
	vhdsSeen  bool                             // a VirtualHost response has arrived
	given     map[string]map[string]*anypb.Any // by type, the resources Handle was last given
	clusters  map[string]*clusterSpec
	endpoints map[string][]string
	secrets   map[string]*secretSpec
	jwks      map[string]*jwksSet        // remote key sets, kept across config changes
	checkers  map[string]*endpointHealth // ext_authz endpoints' health checks (attachHealth)
	closed    bool
	waiting   map[uint32]string // what each port last waited for, to log changes only
}

// NewProxy returns a Proxy with no config: every port answers 503.
func NewProxy(o ProxyOptions) *Proxy {
	if len(o.Ports) == 0 {
		o.Ports = []uint32{HTTPPort, HTTPSPort}
	}
	p := &Proxy{log: o.Log, eng: newEngine(o.Log), pool: newConnPool(), ports: map[uint32]*atomic.Pointer[listenerTable]{}, waiting: map[uint32]string{}, given: map[string]map[string]*anypb.Any{}, jwks: map[string]*jwksSet{}, checkers: map[string]*endpointHealth{}}
	for _, port := range o.Ports {
		p.ports[port] = &atomic.Pointer[listenerTable]{}
	}
	return p
}

// Handle takes the full current set of one type's resources. Each resource that fails
// Envoy's validation or uses what the gateway does not implement keeps its previous
// version (or stays absent) and, when this call brings it (it is not the very
// *anypb.Any of the last call), is named in the returned error, one line per problem, so
// the xDS client NACKs; the others are applied.
func (p *Proxy) Handle(typeURL string, resources map[string]*anypb.Any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	switch typeURL {
	case resourcev3.ListenerType:
		p.listeners, err = update(p.listeners, resources, p.given[typeURL], typeURL, "listener", new(listenerv3.Listener), sameName((*listenerv3.Listener).GetName), p.parseListener, nil)
		err = errors.Join(err, p.onePerPort())
	case resourcev3.RouteType:
		memo, prev := make(vhostMemo, len(p.vhosts)), p.routes
		p.routes, err = update(p.routes, resources, p.given[typeURL], typeURL, "route config", new(routev3.RouteConfiguration), sameName((*routev3.RouteConfiguration).GetName),
			func(rc *routev3.RouteConfiguration, pr *problems) *routeSpec { return parseRouteConfig(rc, "", pr) },
			func(n string, a *anypb.Any) (*routeSpec, bool) { return parseRouteConfigMemo(a, n, p.vhosts, memo) })
		p.vhosts = memo
		err = errors.Join(err, p.checkRoutesVHDS(prev, resources))
	case resourcev3.VirtualHostType:
		err = p.updateVirtualHosts(resources)
	case resourcev3.ClusterType:
		p.clusters, err = update(p.clusters, resources, p.given[typeURL], typeURL, "cluster", new(clusterv3.Cluster), sameName((*clusterv3.Cluster).GetName), p.parseCluster, nil)
	case resourcev3.EndpointType:
		p.endpoints, err = update(p.endpoints, resources, p.given[typeURL], typeURL, "cluster load assignment", new(endpointv3.ClusterLoadAssignment), sameName((*endpointv3.ClusterLoadAssignment).GetClusterName),
			func(cla *endpointv3.ClusterLoadAssignment, pr *problems) []string { return parseEndpoints(cla, "", pr) }, nil)
	case resourcev3.SecretType:
		p.secrets, err = update(p.secrets, resources, p.given[typeURL], typeURL, "secret", new(tlsv3.Secret), sameName((*tlsv3.Secret).GetName), parseSecret, nil)
	default:
		return fmt.Errorf("devgateway: %s is not a type the gateway takes", typeURL)
	}
	p.given[typeURL] = resources
	p.rebuild()
	return err
}

// update parses every resource of one type in name order, once named has checked its
// message fits its resource name; a resource with problems keeps its previous version.
// quick, when set, is tried first on each resource: when it says ok, its result is
// taken as the resource's, without a problem. The error names
// only the problems of resources this update brings (not the very *anypb.Any of last,
// the set the last update was given), as Envoy judges only what a response carries: a
// resource refused before and not sent again keeps being refused without a word.
func update[M proto.Message, S any](prev map[string]S, rs, last map[string]*anypb.Any, typeURL, kind string, zero M, named func(M, string, *problems), parse func(M, *problems) S, quick func(string, *anypb.Any) (S, bool)) (map[string]S, error) {
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	sort.Strings(names)
	next := make(map[string]S, len(rs))
	var errs []error
	for _, n := range names {
		if quick != nil {
			if s, ok := quick(n, rs[n]); ok {
				next[n] = s
				continue
			}
		}
		m := proto.Clone(zero).(M)
		var pr problems
		var s S
		switch err := unpack(rs[n], typeURL, m); {
		case err != nil:
			pr.addf("", "%v", err)
		default:
			if named(m, n, &pr); len(pr) == 0 {
				s = parse(m, &pr)
			}
		}
		if err := pr.err(kind + " " + n); err != nil {
			if a, ok := last[n]; !ok || a != rs[n] {
				errs = append(errs, err)
			}
			if old, ok := prev[n]; ok {
				next[n] = old
			}
			continue
		}
		next[n] = s
	}
	return next, errors.Join(errs...)
}

// sameName is update's check for a type whose message names its resource: name(m) must
// be the resource's name.
func sameName[M proto.Message](name func(M) string) func(M, string, *problems) {
	return func(m M, n string, pr *problems) {
		if name(m) != n {
			pr.addf("name", "%q is not the resource's name %q", name(m), n)
		}
	}
}

func (p *Proxy) parseListener(l *listenerv3.Listener, pr *problems) *listenerSpec {
	s := parseListener(l, pr)
	if _, ok := p.ports[s.port]; !ok && l.GetAddress().GetSocketAddress() != nil {
		pr.addf("address.socket_address.port_value", "%d is not a port this gateway serves (%v)", s.port, p.portList())
	}
	return s
}

// onePerPort drops every listener but the first (by name) on a port, as Envoy could
// not bind the others.
func (p *Proxy) onePerPort() error {
	names := make([]string, 0, len(p.listeners))
	for n := range p.listeners {
		names = append(names, n)
	}
	sort.Strings(names)
	owner := map[uint32]string{}
	var errs []error
	for _, n := range names {
		port := p.listeners[n].port
		if first, ok := owner[port]; ok {
			errs = append(errs, fmt.Errorf("listener %s: port %d is taken by listener %s", n, port, first))
			delete(p.listeners, n)
			continue
		}
		owner[port] = n
	}
	return errors.Join(errs...)
}

func (p *Proxy) portList() []uint32 {
	out := make([]uint32, 0, len(p.ports))
	for port := range p.ports {
		out = append(out, port)
	}
	slices.Sort(out)
	return out
}

// Ready reports whether the listener on port has a complete config and is served.
func (p *Proxy) Ready(port uint32) bool {
	slot, ok := p.ports[port]
	return ok && slot.Load() != nil
}

// Close stops the health checks and closes the connections to the ext_authz servers.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.retainCheckers(nil)
	p.mu.Unlock()
	p.pool.close()
}
