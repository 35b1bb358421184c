package proxyadmin

import (
	"fmt"
	"sort"
	"strings"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// statPrefixes are Envoy's stat prefixes of each xDS type's updates.
var statPrefixes = map[string]string{
	resourcev3.ClusterType:  "cluster_manager.cds",
	resourcev3.EndpointType: "cluster_manager.eds",
	resourcev3.ListenerType: "listener_manager.lds",
	resourcev3.RouteType:    "http.rds",
	resourcev3.SecretType:   "sds",
}

// Stats is Envoy's /stats text for what the gateway records: per xDS type the update
// attempts, successes and rejections and the resources held, and whether it is live.
func (r *Recorder) Stats(live bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for typ, p := range statPrefixes {
		st := r.stats[typ]
		if st == nil {
			st = &typeStats{}
		}
		lines = append(lines,
			fmt.Sprintf("%s.update_attempt: %d", p, st.attempt),
			fmt.Sprintf("%s.update_success: %d", p, st.success),
			fmt.Sprintf("%s.update_rejected: %d", p, st.rejected),
			fmt.Sprintf("%s.resources: %d", p, len(r.resources[typ])))
	}
	state := 0
	if live {
		state = 1
	}
	lines = append(lines, fmt.Sprintf("server.live: %d", state))
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
