{{/* Chart name, overridable. */}}
{{- define "cronscale.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name; the release name alone when it already contains the chart name. */}}
{{- define "cronscale.fullname" -}}
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

{{/* Labels of every object. */}}
{{- define "cronscale.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cronscale.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cronscale
{{- end }}

{{/* Labels the Deployment selects its pods by (immutable after install). */}}
{{- define "cronscale.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cronscale.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "cronscale.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "cronscale.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "cronscale.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Labels of the execution archive's PostgreSQL, and those its StatefulSet selects by. */}}
{{- define "cronscale.archiveSelectorLabels" -}}
app.kubernetes.io/name: {{ include "cronscale.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: archive
{{- end }}

{{- define "cronscale.archiveLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cronscale.archiveSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cronscale
{{- end }}

{{/* Labels of the dashboard's objects; its pods are selected by the last three. */}}
{{- define "cronscale.dashboardLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cronscale
{{ include "cronscale.dashboardSelectorLabels" . }}
{{- end }}

{{- define "cronscale.dashboardSelectorLabels" -}}
app.kubernetes.io/name: {{ include "cronscale.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: dashboard
{{- end }}

{{/*
Secret holding the history endpoint's serving certificate: the user's, or the one the operator
makes at start when missing.
*/}}
{{- define "cronscale.historyTLSSecret" -}}
{{- default (printf "%s-history-tls" (include "cronscale.fullname" .)) .Values.archive.tls.existingSecret }}
{{- end }}

{{/*
Secret holding the bundled PostgreSQL's password (key password; dsn when the operator made it).
*/}}
{{- define "cronscale.archiveSecret" -}}
{{- default (printf "%s-archive" (include "cronscale.fullname" .)) .Values.archive.postgres.existingSecret }}
{{- end }}

{{/* Env of the bundled PostgreSQL's containers; argument: (list secretName). */}}
{{- define "cronscale.archivePostgresEnv" -}}
- name: POSTGRES_USER
  value: cronscale
- name: POSTGRES_DB
  value: cronscale
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ index . 0 }}
      key: password
- name: PGDATA
  value: /var/lib/postgresql/data/pgdata
{{- end }}

{{/*
"true" when the operator has an execution archive (and so serves the history endpoint).
*/}}
{{- define "cronscale.archiveEnabled" -}}
{{- if or .Values.archive.postgres.enabled .Values.archive.existingSecret.name }}true{{ end }}
{{- end }}

{{/*
The kinds users write (aggregated view/edit roles).
*/}}
{{- define "cronscale.userKinds" -}}
- scheduledtasks
- scaleplatforms
- scaleplatformbackups
- scaleplatformrestores
{{- end }}

{{/* Labels of the CRDs (no component: they belong to the whole release). */}}
{{- define "cronscale.crdLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "cronscale.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cronscale
{{- end }}

{{/*
A key of platform.prices as the settings name it: STANDARD, PER_VCPU, PER_GIB_MEMORY, ...
(the operator's env and, lower-cased with dashes, the dashboard's --prices-* flags).
*/}}
{{- define "cronscale.priceKey" -}}
{{- $known := dict "currency" "CURRENCY" "standard" "STANDARD" "professional" "PROFESSIONAL" "enterprise" "ENTERPRISE" "perVcpu" "PER_VCPU" "perGiBMemory" "PER_GIB_MEMORY" "perGiBStorage" "PER_GIB_STORAGE" -}}
{{- required (printf "platform.prices.%s is not a price (currency, standard, professional, enterprise, perVcpu, perGiBMemory, perGiBStorage)" .) (get $known .) -}}
{{- end }}
