{{/*
Names and labels.
*/}}
{{- define "trellis.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "trellis.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Resource name of one service's objects: <fullname>-<service>, at most 63 characters. */}}
{{- define "trellis.componentName" -}}
{{- printf "%s-%s" (include "trellis.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "trellis.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "trellis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trellis.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "trellis.labels" -}}
helm.sh/chart: {{ include "trellis.chart" . }}
{{ include "trellis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trellis
{{- end -}}

{{/* Labels of one service ({root, name}). */}}
{{- define "trellis.componentSelectorLabels" -}}
{{ include "trellis.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "trellis.componentLabels" -}}
{{ include "trellis.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/*
The services and what they serve. gRPC: has a gRPC server (port 50051). consumer: reads a
Kafka topic as a consumer group, so KEDA can scale it on lag. http-api serves the REST and
OpenAI-compatible HTTP API on port 8081 (named api) and calls the gRPC services.
*/}}
{{- define "trellis.serviceNames" -}}
ingestion chunking extraction graph-store retrieval chat http-api
{{- end -}}

{{- define "trellis.grpcServices" -}}
ingestion graph-store retrieval chat
{{- end -}}

{{/* Consumer group and topic each consumer reads (for KEDA lag scaling). */}}
{{- define "trellis.consumers" -}}
chunking: { group: chunking, topic: document.ingested }
extraction: { group: extraction, topic: chunk.ready }
graph-store: { group: graph-store, topic: chunk.extracted }
{{- end -}}

{{- define "trellis.topics" -}}
document.ingested chunk.ready chunk.extracted
{{- end -}}

{{- define "trellis.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "trellis.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* An image reference from a per-service override ({repository, tag, digest}) and the defaults. */}}
{{- define "trellis.imageRef" -}}
{{- $root := .root -}}
{{- $override := .override | default dict -}}
{{- $defaultRepository := printf "%s%s" $root.Values.image.repositoryPrefix .name -}}
{{- if $root.Values.image.registry -}}
{{- $defaultRepository = printf "%s/%s" (trimSuffix "/" $root.Values.image.registry) $defaultRepository -}}
{{- end -}}
{{- $repository := $override.repository | default $defaultRepository -}}
{{- if $override.digest -}}
{{- printf "%s@%s" $repository $override.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (toString ($override.tag | default $root.Values.image.tag | default $root.Chart.AppVersion)) -}}
{{- end -}}
{{- end -}}

{{- define "trellis.image" -}}
{{- $service := index .root.Values.services .name -}}
{{- include "trellis.imageRef" (dict "root" .root "name" .name "override" $service.image) -}}
{{- end -}}

{{/* The Jobs' image: migrations.image, or the ingestion image (every image carries the CLI). */}}
{{- define "trellis.jobImage" -}}
{{- $override := .Values.migrations.image -}}
{{- if $override.repository -}}
{{- include "trellis.imageRef" (dict "root" . "name" "cli" "override" $override) -}}
{{- else -}}
{{- include "trellis.image" (dict "root" . "name" "ingestion") -}}
{{- end -}}
{{- end -}}

{{/* The Secret a secrets.<entry> is read from. */}}
{{- define "trellis.secretName" -}}
{{- $entry := index .root.Values.secrets .entry -}}
{{- if .root.Values.secrets.devSecret.create -}}
{{- printf "%s-dev" (include "trellis.fullname" .root) -}}
{{- else -}}
{{- $name := $entry.existingSecret | default .root.Values.secrets.existingSecret -}}
{{- required (printf "secrets.existingSecret (or secrets.%s.existingSecret) must name the Secret holding %s" .entry $entry.key) $name -}}
{{- end -}}
{{- end -}}

{{/* Secret-backed environment of every Trellis container. */}}
{{- define "trellis.secretEnv" -}}
{{- $root := . -}}
{{- range $entry, $variable := dict "dbUrl" "TRELLIS_DB_URL" "internalToken" "TRELLIS_INTERNAL_TOKEN" "openaiApiKey" "OPENAI_API_KEY" "apiKeys" "TRELLIS_API_KEYS" }}
{{- $ref := index $root.Values.secrets $entry }}
- name: {{ $variable }}
  valueFrom:
    secretKeyRef:
      name: {{ include "trellis.secretName" (dict "root" $root "entry" $entry) }}
      key: {{ if $root.Values.secrets.devSecret.create }}{{ $variable }}{{ else }}{{ $ref.key }}{{ end }}
      optional: {{ $ref.optional }}
{{- end }}
{{- end -}}

{{/* The container securityContext and pod securityContext. */}}
{{- define "trellis.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{- define "trellis.containerSecurityContext" -}}
{{- toYaml .Values.securityContext -}}
{{- end -}}

{{/* The annotation that rolls pods when configuration changes. */}}
{{- define "trellis.configChecksum" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- end -}}

{{/* host:port of a gRPC service of the release, as other pods dial it. */}}
{{- define "trellis.grpcAddress" -}}
{{- printf "%s.%s.svc:%d" (include "trellis.componentName" (dict "root" .root "name" .name)) .root.Release.Namespace (.root.Values.service.grpcPort | int) -}}
{{- end -}}
