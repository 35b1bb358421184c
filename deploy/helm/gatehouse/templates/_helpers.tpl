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
