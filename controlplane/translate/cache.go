package translate

import (
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// Cache makes translation incremental. It remembers every translation by the content
// hashes it depends on, so a change re-translates only what it touches, and what did
// not change keeps the very same message pointers (which the xDS server skips without
// hashing them again). The functions it memoizes are pure; Cache only remembers.
//
// A run is Begin, any lookups, then Sweep, which forgets what the run did not use. A
// Cache is not safe for concurrent use.
type Cache struct {
	gen        uint64
	vhosts     memo[*VirtualHost]
	clusters   memo[*Cluster]
	settings   memo[Settings]
	authConfig memo[*extauthv1.ExtAuthConfig]
	secretRefs memo[[]string]
	envoyVH    memo[*routev3.VirtualHost]
	envoyCl    memo[envoyCluster]
	listeners  memo[*listenerv3.Listener]
	routes     map[string]*routeConfig // by role + "/" + route config name
}

type envoyCluster struct {
	cluster *clusterv3.Cluster
	cla     *endpointv3.ClusterLoadAssignment
}

// routeConfig is the last route configuration built, with the virtual hosts it holds,
// so an unchanged one keeps its pointer.
type routeConfig struct {
	msg *routev3.RouteConfiguration
	gen uint64
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{routes: map[string]*routeConfig{}}
}

// Begin starts a run.
func (c *Cache) Begin() { c.gen++ }

// Sweep forgets every translation the run since Begin did not use.
func (c *Cache) Sweep() {
	c.vhosts.sweep(c.gen)
	c.clusters.sweep(c.gen)
	c.settings.sweep(c.gen)
	c.authConfig.sweep(c.gen)
	c.secretRefs.sweep(c.gen)
	c.envoyVH.sweep(c.gen)
	c.envoyCl.sweep(c.gen)
	c.listeners.sweep(c.gen)
	for k, r := range c.routes {
		if r.gen != c.gen {
			delete(c.routes, k)
		}
	}
}

// VirtualHost is VirtualHostOf, memoized by content hash.
func (c *Cache) VirtualHost(r *source.Resource) (*VirtualHost, error) {
	return c.vhosts.get(c.gen, r.Hash, func() (*VirtualHost, error) {
		return VirtualHostOf(r.Object.(*apiv1.VirtualService), r.Hash)
	})
}

// Cluster is ClusterOf, memoized by content hash.
func (c *Cache) Cluster(r *source.Resource) (*Cluster, error) {
	return c.clusters.get(c.gen, r.Hash, func() (*Cluster, error) {
		return ClusterOf(r.Object.(*apiv1.Upstream), r.Hash)
	})
}

// Settings is SettingsOf, memoized by content hash.
func (c *Cache) Settings(r *source.Resource) (Settings, error) {
	return c.settings.get(c.gen, r.Hash, func() (Settings, error) {
		return SettingsOf(r.Object.(*apiv1.Settings))
	})
}

// AuthConfig is AuthConfig (the function), memoized by the content hashes of the
// AuthConfig and of the Secrets it references, and the timeout.
func (c *Cache) AuthConfig(r *source.Resource, secrets func(id string) *source.Resource, timeout time.Duration) (*extauthv1.ExtAuthConfig, error) {
	ac := r.Object.(*apiv1.AuthConfig)
	refs, _ := c.secretRefs.get(c.gen, r.Hash, func() ([]string, error) { return SecretRefs(ac), nil })
	var key strings.Builder
	key.WriteString(r.Hash)
	key.WriteString("|" + timeout.String())
	for _, id := range refs {
		key.WriteString("|")
		if s := secrets(id); s != nil {
			key.WriteString(s.Hash)
		}
	}
	return c.authConfig.get(c.gen, key.String(), func() (*extauthv1.ExtAuthConfig, error) {
		return AuthConfig(ac, func(id string) *apiv1.Secret {
			if s := secrets(id); s != nil {
				return s.Object.(*apiv1.Secret)
			}
			return nil
		}, timeout)
	})
}

// memo maps a key to a value and the error computing it gave.
type memo[T any] struct {
	m    map[string]*memoEntry[T]
	used int // entries used in the current generation
	gen  uint64
}

type memoEntry[T any] struct {
	v   T
	err error
	gen uint64
}

func (m *memo[T]) get(gen uint64, key string, f func() (T, error)) (T, error) {
	if m.m == nil {
		m.m = map[string]*memoEntry[T]{}
	}
	if m.gen != gen {
		m.gen, m.used = gen, 0
	}
	e := m.m[key]
	if e == nil {
		v, err := f()
		e = &memoEntry[T]{v: v, err: err}
		m.m[key] = e
	}
	if e.gen != gen {
		e.gen = gen
		m.used++
	}
	return e.v, e.err
}

// sweep drops the entries not used in gen; it costs nothing when all were used.
func (m *memo[T]) sweep(gen uint64) {
	if m.gen != gen {
		m.gen, m.used = gen, 0
	}
	if len(m.m) == m.used {
		return
	}
	for k, e := range m.m {
		if e.gen != gen {
			delete(m.m, k)
		}
	}
}
