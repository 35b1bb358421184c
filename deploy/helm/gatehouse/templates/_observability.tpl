{{/* gatehouse.otelEnv: the OTEL_* variables of extauth and the control plane. */}}
{{- define "gatehouse.otelEnv" -}}
{{- $otlp := .Values.observability.otlp -}}
{{- if $otlp.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $otlp.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $otlp.protocol | default "grpc" | quote }}
{{- end }}
{{- range $k, $v := $otlp.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end }}

{{/* gatehouse.proxyCollector: host:port of the OTLP/gRPC receiver the gateway proxies
send spans to: otlp.proxyCollector, else otlp.endpoint's host:port when it is
http://host:port with protocol grpc, else empty (the proxies do not trace). */}}
{{- define "gatehouse.proxyCollector" -}}
{{- $otlp := .Values.observability.otlp -}}
{{- if $otlp.proxyCollector -}}
{{- $otlp.proxyCollector -}}
{{- else if and (hasPrefix "http://" $otlp.endpoint) (eq ($otlp.protocol | default "grpc") "grpc") -}}
{{- trimPrefix "http://" $otlp.endpoint | trimSuffix "/" -}}
{{- end -}}
{{- end }}

{{/* gatehouse.observeArgs: extauth's trace and decision log flags. */}}
{{- define "gatehouse.observeArgs" -}}
{{- $o := .Values.observability -}}
{{- if ne (toString $o.traceSampleRatio) "" }}
- --trace-sample-ratio
- {{ $o.traceSampleRatio | toString | quote }}
{{- end }}
{{- with $o.decisionLog }}
{{- if .to }}
{{- if not (has .to (list "stdout" "otlp")) }}
{{- fail (printf "observability.decisionLog.to: %q is not one of stdout, otlp" .to) }}
{{- end }}
- --decision-log
- {{ .to | quote }}
- --decision-log-sample
- {{ .sample | toString | quote }}
- --decision-log-rate
- {{ .rate | toString | quote }}
{{- with .headers }}
- --decision-log-headers
- {{ join "," . | quote }}
{{- end }}
{{- if .rawHeaders }}
- --decision-log-raw-headers
{{- end }}
{{- end }}
{{- end }}
{{- end }}
