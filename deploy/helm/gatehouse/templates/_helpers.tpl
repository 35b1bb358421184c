{{/* Labels on every object of the chart. */}}
{{- define "gatehouse.labels" -}}
app: gatehouse
app.kubernetes.io/name: gatehouse
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
gatehouse.image renders registry/repository:tag from (dict "image" IMAGE "root" $). The tag
defaults to the chart's appVersion, so plugin images follow the installed gatehouse release.
*/}}
{{- define "gatehouse.image" -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion | toString -}}
{{- if .image.registry }}{{ .image.registry }}/{{ end }}{{ .image.repository }}:{{ $tag }}
{{- end }}

{{/* gatehouse.checkPlugin checks one entry of global.extensions.extAuth.plugins: (dict "key" KEY "plugin" VALUE). */}}
{{- define "gatehouse.checkPlugin" -}}
{{- $path := printf "global.extensions.extAuth.plugins.%s" .key -}}
{{- if or (gt (len .key) 56) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" .key)) -}}
{{- fail (printf "%s: key must be a DNS label of at most 56 characters (lower case letters, digits, '-'), since the init container is named plugin-%s" $path .key) -}}
{{- end -}}
{{- if not (kindIs "map" .plugin) -}}
{{- fail (printf "%s: must be a map with an image (image.repository, image.registry, image.tag, image.pullPolicy)" $path) -}}
{{- end -}}
{{- if not (kindIs "map" .plugin.image) -}}
{{- fail (printf "%s.image: required, with at least image.repository" $path) -}}
{{- end -}}
{{- if not .plugin.image.repository -}}
{{- fail (printf "%s.image.repository: required" $path) -}}
{{- end -}}
{{- end }}

{{/* Security context of every container: the images run as user 65532 and write only to volumes. */}}
{{- define "gatehouse.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop:
    - ALL
{{- end }}

{{/*
gatehouse.configPath is the folder extauth reads with --config: where the chart's
extauth-config ConfigMap, or the user's config.configMap, is mounted.
*/}}
{{- define "gatehouse.configPath" -}}
{{- .Values.global.extensions.extAuth.config.path | default "/etc/gatehouse/config" -}}
{{- end }}

{{/*
gatehouse.checkExtAuth fails on values the extauth binary of this release cannot run with,
so a bad install fails at render time instead of crash looping.
*/}}
{{- define "gatehouse.checkExtAuth" -}}
{{- $ea := .Values.global.extensions.extAuth -}}
{{- $c := $ea.config -}}
{{- if and $ea.xdsAddress (or $c.authConfigs $c.configMap) -}}
{{- fail "global.extensions.extAuth: set xdsAddress (AuthConfigs from a control plane) or config.authConfigs/config.configMap (from a file), not both" -}}
{{- end -}}
{{- if not (kindIs "string" ($c.authConfigs | default "")) -}}
{{- fail "global.extensions.extAuth.config.authConfigs: must be a string of YAML documents; write it as a block scalar (authConfigs: |)" -}}
{{- end -}}
{{- if and $c.authConfigs $c.configMap -}}
{{- fail "global.extensions.extAuth.config: set authConfigs or configMap, not both; a configMap is mounted instead of the chart's extauth-config, so authConfigs would be ignored" -}}
{{- end -}}
{{- $path := include "gatehouse.configPath" . -}}
{{- if or (not (hasPrefix "/" $path)) (has (trimSuffix "/" $path) (list "" "/tmp" "/auth-plugins")) -}}
{{- fail (printf "global.extensions.extAuth.config.path: %q must be an absolute path other than /, /tmp and /auth-plugins, which hold other volumes" $path) -}}
{{- end -}}
{{- end }}

{{/*
gatehouse.extauthXDS is the control-plane address extauth follows over xDS, or "" when it
reads its AuthConfigs from a file: xdsAddress when set, else this release's control plane
unless config.authConfigs or config.configMap give a file.
*/}}
{{- define "gatehouse.extauthXDS" -}}
{{- $ea := .Values.global.extensions.extAuth -}}
{{- if $ea.xdsAddress -}}
{{- $ea.xdsAddress -}}
{{- else if and .Values.controlPlane.enabled (not $ea.config.authConfigs) (not $ea.config.configMap) -}}
{{- printf "controlplane.%s.svc.cluster.local:9977" .Release.Namespace -}}
{{- end -}}
{{- end }}

{{/*
gatehouse.envoyBootstrap is a gateway proxy's Envoy bootstrap, from (dict "root" $ "name"
PROXY): files/envoy-bootstrap.yaml, which `make generate` writes with `gatehouse envoy
bootstrap` (so the chart and the command never differ), for the control plane of the
release namespace and the role <namespace>~<proxy>. Envoy's --service-node gives each pod
its own node id.
*/}}
{{- define "gatehouse.envoyBootstrap" -}}
{{- .root.Files.Get "files/envoy-bootstrap.yaml" | replace "gh-proxy-name" .name | replace "gh-release-namespace" .root.Release.Namespace -}}
{{- end }}
