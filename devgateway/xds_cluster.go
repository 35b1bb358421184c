package devgateway

import (
	"fmt"
	"net"
	"strconv"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// httpProtocolOptionsKey is the typed_extension_protocol_options key of
// HttpProtocolOptions.
const httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// clusterSpec is a Cluster the gateway can serve.
type clusterSpec struct {
	name  string
	eds   string   // the ClusterLoadAssignment of an EDS cluster; "" otherwise
	addrs []string // the inline load assignment of any other cluster
	http2 bool
	// tlsDir is the certificate folder of a cluster to an extauth server over mutual TLS
	// (parseClusterTLS); "" for plain text. tls is that folder, loaded (Proxy.parseCluster).
	tlsDir string
	tls    *mtls.Folder
	hc     *healthCheck // nil when the cluster is not health-checked
}

func parseCluster(c *clusterv3.Cluster, pr *problems) *clusterSpec {
	pr.only(c, "", "name", "type", "eds_cluster_config", "connect_timeout", "lb_policy", "load_assignment",
		"typed_extension_protocol_options", "dns_lookup_family", "dns_refresh_rate", "respect_dns_ttl",
		"per_connection_buffer_limit_bytes", "alt_stat_name", "http2_protocol_options", "transport_socket",
		"health_checks", "common_lb_config")
	s := &clusterSpec{name: c.GetName(), http2: c.GetHttp2ProtocolOptions() != nil, hc: parseHealthChecks(c, pr)}
	if ts := c.GetTransportSocket(); ts != nil {
		s.tlsDir = parseClusterTLS(ts, "transport_socket", pr)
	}
	switch c.GetType() {
	case clusterv3.Cluster_EDS:
		eds := c.GetEdsClusterConfig()
		pr.only(eds, "eds_cluster_config", "eds_config", "service_name")
		configSource(eds.GetEdsConfig(), "eds_cluster_config.eds_config", pr)
		s.eds = eds.GetServiceName()
		if s.eds == "" {
			s.eds = c.GetName()
		}
		if c.GetLoadAssignment() != nil {
			pr.addf("load_assignment", "an EDS cluster takes its endpoints from EDS")
		}
	case clusterv3.Cluster_STATIC, clusterv3.Cluster_STRICT_DNS, clusterv3.Cluster_LOGICAL_DNS:
		// Host names are resolved on every connection, which is what DNS clusters
		// come to for a dev gateway.
		s.addrs = parseEndpoints(c.GetLoadAssignment(), "load_assignment", pr)
	default:
		pr.addf("type", "%s is not supported (EDS, STATIC, STRICT_DNS, LOGICAL_DNS)", c.GetType())
	}
	switch c.GetLbPolicy() {
	case clusterv3.Cluster_ROUND_ROBIN, clusterv3.Cluster_LEAST_REQUEST, clusterv3.Cluster_RANDOM:
		// All spread requests; the gateway does it round robin.
	default:
		pr.addf("lb_policy", "%s is not supported", c.GetLbPolicy())
	}
	for key, a := range c.GetTypedExtensionProtocolOptions() {
		path := "typed_extension_protocol_options[" + key + "]"
		var o httpv3.HttpProtocolOptions
		if key != httpProtocolOptionsKey {
			pr.addf(path, "not supported by the dev gateway")
			continue
		}
		if err := unpackTyped(a, &o); err != nil {
			pr.addf(path, "%v", err)
			continue
		}
		pr.only(&o, path, "common_http_protocol_options", "upstream_http_protocol_options", "explicit_http_config")
		ex := o.GetExplicitHttpConfig()
		switch {
		case ex == nil:
			pr.addf(path, "only explicit_http_config is supported")
		case ex.GetHttp2ProtocolOptions() != nil:
			s.http2 = true
		case ex.GetHttp3ProtocolOptions() != nil:
			pr.addf(join(path, "explicit_http_config.http3_protocol_options"), "not supported by the dev gateway")
		}
	}
	return s
}

// parseCluster is parseCluster with the certificate folder of a mutual-TLS cluster
// loaded; a folder that does not load refuses the cluster.
func (p *Proxy) parseCluster(c *clusterv3.Cluster, pr *problems) *clusterSpec {
	s := parseCluster(c, pr)
	if s.tlsDir != "" && len(*pr) == 0 {
		f, err := mtls.Load(s.tlsDir, p.log)
		if err != nil {
			pr.addf("transport_socket", "%v", err)
		}
		s.tls = f
	}
	return s
}

// parseEndpoints returns the endpoints a ClusterLoadAssignment sends traffic to: the
// usable ones (health unknown, healthy or degraded) of the lowest priority that has any,
// as Envoy fails over from one priority to the next.
func parseEndpoints(cla *endpointv3.ClusterLoadAssignment, path string, pr *problems) []string {
	pr.only(cla, path, "cluster_name", "endpoints")
	byPriority := map[uint32][]string{}
	for i, le := range cla.GetEndpoints() {
		lp := join(path, fmt.Sprintf("endpoints[%d]", i))
		pr.only(le, lp, "locality", "lb_endpoints", "load_balancing_weight", "priority")
		for j, lb := range le.GetLbEndpoints() {
			ep := join(lp, fmt.Sprintf("lb_endpoints[%d]", j))
			pr.only(lb, ep, "endpoint", "health_status", "load_balancing_weight", "metadata")
			e := lb.GetEndpoint()
			pr.only(e, join(ep, "endpoint"), "address", "hostname", "health_check_config")
			addr, ok := socketAddr(e.GetAddress(), join(ep, "endpoint.address"), pr)
			switch lb.GetHealthStatus() {
			case corev3.HealthStatus_UNHEALTHY, corev3.HealthStatus_DRAINING, corev3.HealthStatus_TIMEOUT:
				continue
			}
			if ok {
				byPriority[le.GetPriority()] = append(byPriority[le.GetPriority()], addr)
			}
		}
	}
	var best []string
	bestP := uint32(0)
	for p, addrs := range byPriority {
		if best == nil || p < bestP {
			best, bestP = addrs, p
		}
	}
	return best
}

func socketAddr(a *corev3.Address, path string, pr *problems) (string, bool) {
	sa := a.GetSocketAddress()
	if sa == nil {
		pr.addf(path, "only socket addresses are supported")
		return "", false
	}
	pr.only(sa, join(path, "socket_address"), "address", "port_value", "ipv4_compat")
	return net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue()))), true
}
