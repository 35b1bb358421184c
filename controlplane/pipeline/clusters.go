package pipeline

import (
	"sync"
	"time"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// edsNames are the clusters whose endpoints the proxies receive over EDS, of those
// offered to the cluster gate: a proxy has such a cluster only once it acknowledged
// both the cluster and its endpoints.
type edsNames struct {
	mu   sync.Mutex
	last chunked.List[*translate.Cluster] // the clusters last offered
	eds  map[string]bool
}

// offerClusters offers the cluster gate the clusters that changed since the last run
// (new, edited or gone): the new ones are pending until every proxy has them.
func (p *Pipeline) offerClusters(cs chunked.List[*translate.Cluster], at time.Time) {
	e := &p.eds
	e.mu.Lock()
	last := e.last
	e.last = cs
	var changed []string
	present := map[string]bool{}
	if e.eds == nil {
		e.eds = map[string]bool{}
	}
	add := func(c *translate.Cluster) {
		changed = append(changed, c.Name)
		present[c.Name] = true
		e.eds[c.Name] = c.Discovered || c.IPOnly()
	}
	if !last.Same(cs) && !chunked.Changes(last, cs, func(_ int, old, new *translate.Cluster) {
		changed = append(changed, old.Name)
		add(new)
	}) {
		// Clusters were added or removed: a pass over both lists.
		for c := range last.Values() {
			changed = append(changed, c.Name)
		}
		clear(e.eds)
		for c := range cs.Values() {
			add(c)
		}
	}
	e.mu.Unlock()
	p.cgate.offer(changed, func(id string) bool { return present[id] }, at)
}

// proxiesHave reports every connected proxy of the default role and whether it has
// each cluster: acknowledged it, and its endpoints when they come over EDS.
func (p *Pipeline) proxiesHave(f func(node string, has func(string) bool)) {
	endpoints := map[string]map[string]string{}
	p.o.ProxiesAcked(xds.EndpointType, func(node string, acked map[string]string) { endpoints[node] = acked })
	p.o.ProxiesAcked(xds.ClusterType, func(node string, clusters map[string]string) {
		eps := endpoints[node]
		f(node, func(id string) bool {
			if _, ok := clusters[id]; !ok {
				return false
			}
			if !p.eds.over(id) {
				return true
			}
			_, ok := eps[id]
			return ok
		})
	})
}

// over says whether cluster id's endpoints come over EDS.
func (e *edsNames) over(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.eds[id]
}
