package devgateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// clusterAuthz sends Checks to the endpoints of an ext_authz cluster, round robin,
// over gRPC, as Envoy's envoy_grpc client does. In a health-checked cluster it sends
// them only to the healthy endpoints, and a Check that cannot reach its endpoint (gone,
// or stopping: the gRPC status is UNAVAILABLE) takes that endpoint out until its next
// passing check and goes to the next endpoint, so one replica's restart fails no Check.
type clusterAuthz struct {
	name string
	up   *upstream
	pool *connPool
}

func (c *clusterAuthz) Check(ctx context.Context, req *authv3.CheckRequest, opts ...grpc.CallOption) (*authv3.CheckResponse, error) {
	if !c.up.http2 {
		// Envoy would send gRPC over HTTP/1.1 to such a cluster, and every Check fails.
		return nil, fmt.Errorf("cluster %s: no HTTP/2 protocol options, which gRPC needs", c.name)
	}
	var failed error
	for _, i := range c.up.order() {
		conn, err := c.pool.get(c.up.addrs[i], c.up.tls)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.name, err)
		}
		resp, err := authv3.NewAuthorizationClient(conn).Check(ctx, req, opts...)
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return resp, err
		}
		if c.up.health != nil {
			c.up.health[i].failed()
		}
		failed = err
	}
	if failed != nil {
		return nil, fmt.Errorf("cluster %s: no endpoint reachable: %w", c.name, failed)
	}
	return nil, fmt.Errorf("cluster %s: no healthy upstream", c.name)
}

// reconnect bounds the wait between two attempts to reach an endpoint at a second, as
// Envoy connects anew for the next request: a replica back from a restart on the same
// address is checked and used again within a second, not after gRPC's default backoff
// of up to two minutes.
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: 5 * time.Second,
}

// connGrace is how long a connection to an endpoint no longer in any ext_authz cluster
// stays open, so Checks in flight on the config before the change finish.
const connGrace = time.Minute

// connPool keeps one gRPC connection per ext_authz endpoint across config changes.
type connPool struct {
	mu      sync.Mutex
	conns   map[string]*grpc.ClientConn
	retired []retiredConn
	closed  bool
}

type retiredConn struct {
	conn  *grpc.ClientConn
	since time.Time
}

func newConnPool() *connPool { return &connPool{conns: map[string]*grpc.ClientConn{}} }

// poolKey names a connection: its endpoint and, for mutual TLS, the certificate folder.
func poolKey(addr string, tls *mtls.Folder) string {
	if tls == nil {
		return addr
	}
	return addr + "|" + tls.Dir()
}

// get is the connection to addr, in plain text, or over mutual TLS with the folder tls
// to a server that must name the extauth role.
func (p *connPool) get(addr string, tls *mtls.Folder) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("gateway closed")
	}
	key := poolKey(addr, tls)
	if c, ok := p.conns[key]; ok {
		return c, nil
	}
	creds := insecure.NewCredentials()
	if tls != nil {
		creds = mtls.ClientCredentials(tls, mtls.RoleExtauth)
	}
	// passthrough: the address is dialled as given, a host name resolved at connect
	// time, like a DNS cluster.
	c, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds), grpc.WithConnectParams(reconnect))
	if err != nil {
		return nil, err
	}
	p.conns[key] = c
	return c, nil
}

// retain retires the connections not in keep (poolKey) and closes those retired
// longer than connGrace ago.
func (p *connPool) retain(keep map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for addr, c := range p.conns {
		if !keep[addr] {
			delete(p.conns, addr)
			p.retired = append(p.retired, retiredConn{c, now})
		}
	}
	kept := p.retired[:0]
	for _, r := range p.retired {
		if now.Sub(r.since) > connGrace {
			_ = r.conn.Close()
			continue
		}
		kept = append(kept, r)
	}
	p.retired = kept
}

func (p *connPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	for _, r := range p.retired {
		_ = r.conn.Close()
	}
	p.conns, p.retired = map[string]*grpc.ClientConn{}, nil
}
