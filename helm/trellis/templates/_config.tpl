{{/*
Settings every Trellis process reads from its environment (non-secret), as a YAML map: the
ConfigMap's data, and the hook Jobs' env (they run before the ConfigMap exists).
*/}}
{{- define "trellis.configData" -}}
{{- $fullname := include "trellis.fullname" . -}}
TRELLIS_MODE: distributed
KAFKA_BROKERS: {{ required "kafka.brokers must list at least one host:port" (join "," .Values.kafka.brokers) | quote }}
{{- with .Values.kafka.topicPrefix }}
TRELLIS_KAFKA_TOPIC_PREFIX: {{ . | quote }}
{{- end }}
TRELLIS_KAFKA_PARTITIONS: {{ .Values.kafka.topics.partitions | int | quote }}
TRELLIS_KAFKA_REPLICATION_FACTOR: {{ .Values.kafka.topics.replicationFactor | int | quote }}
TRELLIS_KAFKA_CONCURRENCY: {{ .Values.kafka.consumerConcurrency | int | quote }}
TRELLIS_KAFKA_EVENTS_PER_PARTITION: {{ .Values.kafka.eventsPerPartition | int | quote }}
TRELLIS_DB_POOL_SIZE: {{ .Values.config.dbPoolSize | int | quote }}
TRELLIS_GRPC_HOST: "0.0.0.0"
TRELLIS_GRPC_PORT: "50051"
TRELLIS_HTTP_HOST: "0.0.0.0"
TRELLIS_HTTP_PORT: "8080"
TRELLIS_DATA_DIR: /tmp/trellis
TRELLIS_LOG_LEVEL: {{ .Values.config.logLevel | quote }}
TRELLIS_MAX_UPLOAD_BYTES: {{ .Values.config.maxUploadBytes | int64 | quote }}
{{- with .Values.config.openaiBaseUrl }}
OPENAI_BASE_URL: {{ . | quote }}
{{- end }}
TRELLIS_LLM_MODEL: {{ .Values.config.llmModel | quote }}
TRELLIS_EMBEDDING_MODEL: {{ .Values.config.embeddingModel | quote }}
TRELLIS_EMBEDDING_DIMENSIONS: {{ .Values.config.embeddingDimensions | int | quote }}
TRELLIS_RETRIEVAL_ADDRESS: {{ printf "%s-retrieval.%s.svc:%d" $fullname .Release.Namespace (.Values.service.grpcPort | int) | quote }}
{{- if .Values.otel.enabled }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ required "otel.endpoint is required when otel.enabled" .Values.otel.endpoint | quote }}
OTEL_EXPORTER_OTLP_PROTOCOL: {{ .Values.otel.protocol | quote }}
OTEL_TRACES_SAMPLER: {{ .Values.otel.sampler | quote }}
OTEL_TRACES_SAMPLER_ARG: {{ .Values.otel.samplerArg | quote }}
{{- with .Values.otel.resourceAttributes }}
OTEL_RESOURCE_ATTRIBUTES: {{ . | quote }}
{{- end }}
{{- else }}
OTEL_SDK_DISABLED: "true"
{{- end }}
{{- range $name, $value := .Values.config.extraEnv }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* A hook Job running the `trellis` CLI ({root, name, args, weight}). */}}
{{- define "trellis.cliJob" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "name" .name -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "trellis.componentName" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "trellis.componentLabels" $ctx | nindent 4 }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: {{ .weight | quote }}
    # Kept after success so its logs can be read; replaced by the next upgrade's.
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  backoffLimit: {{ $root.Values.migrations.backoffLimit }}
  activeDeadlineSeconds: {{ $root.Values.migrations.activeDeadlineSeconds }}
  ttlSecondsAfterFinished: 86400
  template:
    metadata:
      labels:
        {{- include "trellis.componentLabels" $ctx | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $root.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      restartPolicy: Never
      {{- with $root.Values.migrations.serviceAccountName }}
      serviceAccountName: {{ . }}
      {{- end }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- include "trellis.podSecurityContext" $root | nindent 8 }}
      containers:
        - name: {{ .name }}
          image: {{ include "trellis.jobImage" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            {{- toYaml .args | nindent 12 }}
          env:
            - name: SERVICE
              value: cli
            {{- range $key, $value := include "trellis.configData" $root | fromYaml }}
            - name: {{ $key }}
              value: {{ $value | toString | quote }}
            {{- end }}
            {{- include "trellis.secretEnv" $root | trim | nindent 12 }}
          resources:
            {{- toYaml $root.Values.migrations.resources | nindent 12 }}
          securityContext:
            {{- include "trellis.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpSizeLimit }}
{{- end -}}
