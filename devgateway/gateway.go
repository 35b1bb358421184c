package devgateway

import (
	"net/http"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
)

// DefaultCheckTimeout is the ext_authz call timeout when none is configured (Envoy's
// ext_authz default).
const DefaultCheckTimeout = 200 * time.Millisecond

// Gateway is the gateway fed in-process: one listener whose config is handed over with
// Update, every route with ext_authz checked by one AuthorizationClient. Proxy is the
// one fed over xDS.
type Gateway struct {
	authz authv3.AuthorizationClient
	table atomic.Pointer[table]
	eng   *engine
}

// New returns a Gateway that asks authz about every request on routes with ext_authz.
// It answers 404 until the first Update.
func New(authz authv3.AuthorizationClient, log zerolog.Logger) *Gateway {
	g := &Gateway{authz: authz, eng: newEngine(log)}
	g.table.Store(&table{clusters: map[string]*upstream{}})
	return g
}

// Update swaps in a new config. A config with errors still replaces the old one with
// what compiled, as Envoy serves the routes it accepted; the errors are returned.
func (g *Gateway) Update(cfg Config) error {
	t, err := compile(cfg, g.authz)
	g.table.Store(t)
	return err
}

// ServeHTTP matches the route, runs ext_authz if the route has it, and proxies.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.eng.serve(g.table.Load(), w, r)
}
