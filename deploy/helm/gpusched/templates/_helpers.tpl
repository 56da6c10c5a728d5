{{- define "gpusched.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpusched.labels" -}}
app.kubernetes.io/name: gpusched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gpusched.secretName" -}}
{{- if .Values.secrets.create -}}
{{ include "gpusched.fullname" . }}
{{- else -}}
{{ required "secrets.existingSecret is required when secrets.create is false" .Values.secrets.existingSecret }}
{{- end -}}
{{- end -}}

{{- define "gpusched.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
