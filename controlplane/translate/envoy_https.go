package translate

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
)

// The HTTPS listener, when a VirtualService has sslConfig.
const (
	HTTPSListenerName = "https"
	HTTPSPort         = 8443
)

// HTTPSRouteConfig is the route configuration of a VirtualService on the HTTPS
// listener: each has its own filter chain, chosen by SNI, and its own routes.
func HTTPSRouteConfig(vh *VirtualHost) string { return "https." + vh.Name }

// EnvoyHTTPSListener builds the HTTPS listener: the TLS inspector reads the client's
// server name, and each virtual host has a filter chain matching its domains, whose
// certificate comes over SDS (the Secret named after the TLS Secret) — never inline.
// A virtual host with the domain "*" gets the chain without server names, which serves
// any name no other chain claims.
func EnvoyHTTPSListener(l *Listener, ext *Extauthz) *listenerv3.Listener {
	out := &listenerv3.Listener{
		Name:    l.Name,
		Address: socketAddress(l.Address, int(l.Port)),
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       wellknown.TlsInspector,
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspectorv3.TlsInspector{})},
		}},
	}
	for _, vh := range l.VirtualHosts {
		var names []string
		for _, d := range vh.Domains {
			if d == "*" {
				names = nil
				break
			}
			names = append(names, strings.ToLower(d))
		}
		ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: vh.TLSSecret, SdsConfig: adsSource()}},
			AlpnProtocols:                  []string{"http/1.1"},
		}}
		fc := &listenerv3.FilterChain{
			Name:    vh.Name,
			Filters: []*listenerv3.Filter{hcmFilter(l.Name, HTTPSRouteConfig(vh), []*VirtualHost{vh}, ext, l.Tracing)},
			TransportSocket: &corev3.TransportSocket{
				Name:       wellknown.TransportSocketTls,
				ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)},
			},
		}
		if len(names) > 0 {
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: names}
		}
		out.FilterChains = append(out.FilterChains, fc)
	}
	return out
}

// EnvoySecret is the SDS Secret of a TLS certificate.
func EnvoySecret(c *TLSCert) *tlsv3.Secret {
	return &tlsv3.Secret{Name: c.Name, Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.Chain}},
		PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.Key}},
	}}}
}
