{{/* The chart's name, and the name of every object: the release's name when it holds the chart's. */}}
{{- define "s3seal.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "s3seal.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "s3seal.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "s3seal.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "s3seal.selectorLabels" -}}
app.kubernetes.io/name: {{ include "s3seal.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "s3seal.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "s3seal.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The Secret's files s3seal reads, space-separated, in the order the init
container copies them: the master keys, the client credentials, the object
store's secret key.
*/}}
{{- define "s3seal.secretFiles" -}}
{{- $v := .Values }}
{{- $files := list }}
{{- range (list $v.masterKey.keysFile $v.masterKey.keyFile $v.clients.credentialsFile $v.clients.secretKeyFile $v.backend.secretKeyFile) }}
{{- if . }}{{ $files = append $files . }}{{ end }}
{{- end }}
{{- join " " $files }}
{{- end }}

{{/* The port /metrics and /readyz answer on: the metrics listener's, or the S3 API's. */}}
{{- define "s3seal.metricsPortName" -}}
{{- if .Values.metrics.port }}metrics{{ else }}s3{{ end }}
{{- end }}

{{- define "s3seal.metricsPort" -}}
{{- if .Values.metrics.port }}{{ .Values.metrics.port }}{{ else }}7070{{ end }}
{{- end }}

{{/* Refusals of values s3seal would refuse at start, or that lose data. */}}
{{- define "s3seal.validate" -}}
{{- $v := .Values }}
{{- if and $v.masterKey.keysFile $v.masterKey.keyFile }}
{{- fail "masterKey: give keysFile or keyFile, not both" }}
{{- end }}
{{- if not (or $v.masterKey.keysFile $v.masterKey.keyFile $v.kms.key) }}
{{- fail "no master key: set masterKey.keysFile, masterKey.keyFile or kms.key" }}
{{- end }}
{{- if and $v.clients.credentialsFile $v.clients.accessKey }}
{{- fail "clients: give credentialsFile or accessKey with secretKeyFile, not both" }}
{{- end }}
{{- if ne (empty $v.clients.accessKey) (empty $v.clients.secretKeyFile) }}
{{- fail "clients: accessKey and secretKeyFile go together" }}
{{- end }}
{{- if not (or $v.clients.credentialsFile $v.clients.accessKey) }}
{{- fail "no client credentials: set clients.credentialsFile, or clients.accessKey with clients.secretKeyFile" }}
{{- end }}
{{- if not (and $v.backend.endpoint $v.backend.accessKey $v.backend.secretKeyFile) }}
{{- fail "backend: endpoint, accessKey and secretKeyFile are required (the chart does not run the embedded store)" }}
{{- end }}
{{- if $v.secret.create }}
{{- range splitList " " (include "s3seal.secretFiles" .) }}
{{- if not (hasKey $v.secret.stringData .) }}
{{- fail (printf "secret.create: secret.stringData has no %q (--set-file 'secret.stringData.%s=PATH')" . (replace "." "\\." .)) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and $v.lfs.enabled (not $v.lfs.apiKey.secretName) (not $v.lfs.allowUnauthenticated) }}
{{- fail "lfs: set lfs.apiKey.secretName and lfs.apiKey.key (the LFS API listens on every interface), or lfs.allowUnauthenticated where the network authenticates every client" }}
{{- end }}
{{- if and $v.lfs.kafka.enabled (not $v.lfs.enabled) }}
{{- fail "lfs.kafka needs lfs.enabled" }}
{{- end }}
{{- if and $v.lfs.kafka.enabled (not $v.lfs.kafka.advertise) }}
{{- fail "lfs.kafka.advertise: give the host:port producers connect to (the listener listens on every interface)" }}
{{- end }}
{{- $managed := list "listen" "data-dir" "backend-endpoint" "backend-region" "backend-access-key" "backend-secret-key" "backend-secret-key-file" "backend-path-style" "key" "key-file" "keys-file" "credentials-file" "access-key" "secret-key" "secret-key-file" "kms-key" "kms-cache-ttl" "kms-bucket-key-ttl" "kms-timeout" "domains" "allow-anonymous" "allow-plaintext-reads" "log-format" "log-level" "metrics-listen" "lfs" "lfs-listen" "lfs-bucket" "lfs-namespace" "lfs-brokers" "lfs-etcd-endpoints" "lfs-public-url" "lfs-api-key" "lfs-allow-unauthenticated" "lfs-kafka-listen" "lfs-kafka-advertise" "lfs-kafka-sasl-password" }}
{{- range $k, $_ := $v.config }}
{{- if has $k $managed }}
{{- fail (printf "config.%s: set by the chart's own values (values.yaml), or a secret that belongs in the Secret's files" $k) }}
{{- end }}
{{- end }}
{{- end }}
