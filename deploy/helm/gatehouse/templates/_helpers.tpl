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
release namespace and the role <namespace>~<proxy>; files/envoy-bootstrap-mtls.yaml (xDS
over mutual TLS) instead when gatehouse.mtls. Envoy's --service-node gives each pod
its own node id.
*/}}
{{- define "gatehouse.envoyBootstrap" -}}
{{- if include "gatehouse.mtls" .root -}}
{{- include "gatehouse.mtlsFile" (dict "root" .root "name" .name "file" "envoy-bootstrap-mtls.yaml") -}}
{{- else -}}
{{- .root.Files.Get "files/envoy-bootstrap.yaml" | replace "gh-proxy-name" .name | replace "gh-release-namespace" .root.Release.Namespace -}}
{{- end -}}
{{- end }}

{{/*
gatehouse.mtls is "true" when the components talk mutual TLS: mtls.enabled with this
release's control plane (without it extauth is called by an Envoy of the user's, which
holds no certificate of this release).
*/}}
{{- define "gatehouse.mtls" -}}
{{- if and .Values.mtls.enabled .Values.controlPlane.enabled }}true{{ end -}}
{{- end }}

{{/* The folder every component's certificate Secret is mounted at. */}}
{{- define "gatehouse.tlsDir" -}}/etc/gatehouse/tls{{- end }}

{{/* gatehouse.proxyNames is the enabled gateway proxies' names, as a JSON list. */}}
{{- define "gatehouse.proxyNames" -}}
{{- $out := list -}}
{{- range $key, $gp := .Values.gatewayProxies -}}
{{- if $gp.enabled }}{{ $out = append $out (kebabcase $key) }}{{ end -}}
{{- end -}}
{{- toJson $out -}}
{{- end }}

{{/*
gatehouse.mtlsComponents is the certificates of the release as JSON {"items": [{name,
secret, id, hosts}]}: what internal/mtls.Components makes for the release namespace
(the control plane, extauth, one per gateway proxy), named as `gatehouse certs kube`
names their Secrets (gatehouse-<component>-tls).
*/}}
{{- define "gatehouse.mtlsComponents" -}}
{{- $ns := .Release.Namespace -}}
{{- $td := .Values.mtls.trustDomain -}}
{{- $items := list -}}
{{- range $svc := list "controlplane" "extauth" -}}
{{- $hosts := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) "localhost" "127.0.0.1" "::1" -}}
{{- $items = append $items (dict "name" $svc "secret" (printf "gatehouse-%s-tls" $svc) "id" (printf "spiffe://%s/ns/%s/role/%s" $td $ns $svc) "hosts" $hosts) -}}
{{- end -}}
{{- range $name := include "gatehouse.proxyNames" . | fromJsonArray -}}
{{- $items = append $items (dict "name" (printf "proxy-%s" $name) "secret" (printf "gatehouse-proxy-%s-tls" $name) "id" (printf "spiffe://%s/ns/%s/role/proxy/%s" $td $ns $name) "hosts" list) -}}
{{- end -}}
{{- toJson (dict "items" $items) -}}
{{- end }}

{{/* gatehouse.tlsVolume is the volume of a component's certificate Secret, from (dict "secret" NAME). */}}
{{- define "gatehouse.tlsVolume" -}}
- name: tls
  secret:
    secretName: {{ .secret }}
{{- end }}

{{/* gatehouse.tlsMount mounts the tls volume at gatehouse.tlsDir. */}}
{{- define "gatehouse.tlsMount" -}}
# A folder, not a subPath: the kubelet swaps the files when the Secret is renewed, and
# the component reads them again.
- name: tls
  mountPath: {{ include "gatehouse.tlsDir" . }}
  readOnly: true
{{- end }}

{{/*
gatehouse.mtlsFile is a file of files/ that `make generate` writes for mutual TLS, with the
placeholders of gatehouse.envoyBootstrap filled in, from (dict "root" $ "name" PROXY "file" F).
*/}}
{{- define "gatehouse.mtlsFile" -}}
{{- $data := .root.Files.Get (printf "files/%s" .file) -}}
{{- if not $data -}}
{{- fail (printf "files/%s is missing from the chart: run make generate (or set mtls.enabled=false)" .file) -}}
{{- end -}}
{{- $data | replace "gh-proxy-name" .name | replace "gh-release-namespace" .root.Release.Namespace -}}
{{- end }}

{{/* gatehouse.certsHook is the annotations of a pre-install/pre-upgrade hook of weight (the argument). */}}
{{- define "gatehouse.certsHook" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}

{{/*
gatehouse.certsPod is the pod template of the Job and the CronJob that run `gatehouse certs
kube` with the control plane's image, from (dict "root" $ "serviceAccount" NAME).
*/}}
{{- define "gatehouse.certsPod" -}}
{{- $root := .root -}}
{{- $c := $root.Values.mtls.certificates -}}
metadata:
  labels:
    {{- include "gatehouse.labels" $root | nindent 4 }}
    gatehouse: certs
spec:
  serviceAccountName: {{ .serviceAccount }}
  restartPolicy: OnFailure
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: certs
      image: {{ include "gatehouse.image" (dict "image" $root.Values.controlPlane.image "root" $root) | quote }}
      imagePullPolicy: {{ $root.Values.controlPlane.image.pullPolicy | default "IfNotPresent" }}
      args:
        - certs
        - kube
        - --namespace
        - {{ $root.Release.Namespace }}
        - --prefix
        - gatehouse
        - --trust-domain
        - {{ $root.Values.mtls.trustDomain | quote }}
        - --lifetime
        - {{ $c.lifetime | quote }}
        - --ca-lifetime
        - {{ $c.caLifetime | quote }}
        {{- range include "gatehouse.proxyNames" $root | fromJsonArray }}
        - --proxy
        - {{ . }}
        {{- end }}
        - --label
        - {{ printf "app.kubernetes.io/name=gatehouse,app.kubernetes.io/instance=%s,gatehouse=certs" $root.Release.Name | quote }}
      resources:
        requests:
          cpu: 10m
          memory: 32Mi
        limits:
          memory: 128Mi
      securityContext:
        {{- include "gatehouse.containerSecurityContext" $root | nindent 8 }}
{{- end }}
