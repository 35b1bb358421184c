package xds

import (
	"context"
	"strconv"
	"sync"
	"time"

	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/server/config"
	delta "github.com/envoyproxy/go-control-plane/pkg/server/delta/v3"
	rest "github.com/envoyproxy/go-control-plane/pkg/server/rest/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// Resources is the desired state of one role: type URL -> resource name -> message.
type Resources map[string]map[string]types.Resource

// Options configure a Server.
type Options struct {
	Log zerolog.Logger
	// OnNack is called, on the stream's goroutine, when a client rejects a response;
	// it must not block for long.
	OnNack func(Nack)
	// Registerer, when set, gets the server's metrics: pushes, ACKs and NACKs by role
	// and type, connected clients by role, resources served and publish time.
	Registerer prometheus.Registerer
	// Tracer, when set, gets a span for every response pushed to a client (role, node,
	// type, resources), so /zpages shows the pushes beside the translation spans.
	Tracer trace.Tracer
	// Authenticate, when set, says who the client of a stream is from its connection (its
	// TLS certificate), and the role it names is the only one that stream is served: a
	// stream whose client it refuses, whose certificate names no role, or whose node
	// claims another role ends with PermissionDenied before anything is sent. Unset,
	// a client's role is what its node metadata names.
	Authenticate func(context.Context) (mtls.Peer, error)
	// OnAcked, when set, is called, on the stream's goroutine, after a client of role
	// acknowledged a response of typeURL, and after a stream of role closed: what the
	// clients of role hold (EachAcked) changed. It must not block for long.
	OnAcked func(role, typeURL string)
	// OnConnect, when set, is called on a stream's goroutine once its node named its
	// role, before anything is sent on it; OnDisconnect when that stream closed.
	OnConnect, OnDisconnect func(role, node string)
	// StallTimeout bounds how long a response may wait to be written to a client (that
	// stopped reading) or for its answer (ACK or NACK) before the stream is dropped
	// (stall.go); 0 means DefaultStallTimeout.
	StallTimeout time.Duration
}

// Nack is a response a client rejected.
type Nack struct {
	Role, NodeID, TypeURL string
	// Names are the resources of the rejected response.
	Names []string
	// Versions are their versions as served (for a state-of-the-world response, the
	// response's version).
	Versions map[string]string
	// Detail is the client's error_detail message.
	Detail string
	// Identity is the SPIFFE ID of the client's certificate, when roles are taken from
	// certificates.
	Identity string
}

// Server serves each role's published resources over ADS (state of the world and
// delta) from go-control-plane's linear caches, one per role and type.
type Server struct {
	o       Options
	log     zerolog.Logger
	xds     serverv3.Server
	metrics *metrics
	cb      *callbacks
	prefix  string // version prefix of this process's caches (state-of-the-world versions)

	publishMu sync.Mutex   // serialises Publish
	handed    handedTables // version tables sent, until the books take them

	mu      sync.RWMutex // guards roles and pending
	roles   map[string]*role
	pending map[string][]*pendingWatch
}

// NewServer returns a Server with nothing published. A client whose role has not been
// published yet waits (it is not told "nothing"), so a restarted control plane never
// empties its clients before its first complete Publish.
func NewServer(o Options) *Server {
	s := &Server{
		o:       o,
		log:     o.Log.With().Str("subsystem", "xds").Logger(), // the caller's logger names the component
		metrics: newMetrics(o.Registerer),
		prefix:  strconv.FormatInt(time.Now().UnixNano(), 36) + "-",
		roles:   map[string]*role{},
		pending: map[string][]*pendingWatch{},
	}
	s.cb = newCallbacks(s)
	// The delta server never sees a name but the wildcard (callbacks.keepNames), so the
	// legacy wildcard is judged there too.
	ctx := context.Background()
	s.xds = serverv3.NewServerAdvanced(rest.NewServer(dispatch{s}, s.cb), sotw.NewServer(ctx, dispatch{s}, s.cb),
		delta.NewServer(ctx, dispatch{s}, s.cb, config.DeactivateLegacyWildcard()))
	return s
}

// Register serves ADS (state of the world and delta, each stream under the stall
// timeout) and the per-type discovery services on g.
func (s *Server) Register(g *grpc.Server) {
	discovery.RegisterAggregatedDiscoveryServiceServer(g, boundedADS{s.xds, s})
	listenerservice.RegisterListenerDiscoveryServiceServer(g, s.xds)
	routeservice.RegisterRouteDiscoveryServiceServer(g, s.xds)
	clusterservice.RegisterClusterDiscoveryServiceServer(g, s.xds)
	endpointservice.RegisterEndpointDiscoveryServiceServer(g, s.xds)
	secretservice.RegisterSecretDiscoveryServiceServer(g, s.xds)
}

// Version is the content hash of resource name of typeURL as served to role, or ""
// when it is not served. Delta clients see the same string as the resource's version.
func (s *Server) Version(role, typeURL, name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.roles[role]
	if r == nil {
		return ""
	}
	sv, ok := r.served[typeURL][name]
	if !ok {
		return ""
	}
	return sv.version()
}
