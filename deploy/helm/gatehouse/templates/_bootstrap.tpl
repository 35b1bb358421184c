{{/*
gatehouse.envoyBootstrap is a gateway proxy's Envoy bootstrap, from (dict "role" ROLE
"cluster" NAME "xdsHost" HOST). Its Go twin is controlplane/bootstrap, which
`gatehouse envoy bootstrap` prints; deploy/helm's tests check the two agree and that
Envoy's own validation accepts the rendered one.
*/}}
{{- define "gatehouse.envoyBootstrap" -}}
node:
  cluster: {{ .cluster }}
  metadata:
    role: {{ .role | quote }}
dynamic_resources:
  ads_config:
    api_type: GRPC
    transport_api_version: V3
    grpc_services:
      - envoy_grpc:
          cluster_name: gatehouse-xds
  cds_config:
    ads: {}
    resource_api_version: V3
  lds_config:
    ads: {}
    resource_api_version: V3
static_resources:
  clusters:
    - name: gatehouse-xds
      type: STRICT_DNS
      connect_timeout: 5s
      typed_extension_protocol_options:
        envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
          "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
          explicit_http_config:
            http2_protocol_options: {}
      load_assignment:
        cluster_name: gatehouse-xds
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: {{ .xdsHost }}
                      port_value: 9977
admin:
  address:
    socket_address:
      address: 127.0.0.1
      port_value: 19000
{{- end }}
