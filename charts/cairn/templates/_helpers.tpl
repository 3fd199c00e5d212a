{{/* Name of the release's objects: <release>-cairn, or the release name when it contains "cairn". */}}
{{- define "cairn.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cairn.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "gateway") */}}
{{- define "cairn.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "cairn.image" -}}
{{- printf "%s:%s" .repository (default $.appVersion .tag) -}}
{{- end -}}

{{- define "cairn.natsSecret" -}}
{{- default (printf "%s-nats" (include "cairn.fullname" .)) .Values.nats.existingSecret -}}
{{- end -}}

{{/* Environment every service gets: NATS from the Secret, then values' env. */}}
{{- define "cairn.env" -}}
- name: CAIRN_NATS
  valueFrom:
    secretKeyRef:
      name: {{ include "cairn.natsSecret" . }}
      key: {{ .Values.nats.secretKey }}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by every service: (dict "root" $ "svc" .Values.gateway) */}}
{{- define "cairn.podSpec" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .svc.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .svc.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .svc.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* terminationGracePeriodSeconds of a service with a --shutdown-timeout in
whole seconds ("30s"): the timeout, plus 15 s to hand back the rest and exit.
(dict "name" "toolrunner" "timeout" .Values.toolrunner.shutdownTimeout) */}}
{{- define "cairn.graceSeconds" -}}
{{- $t := toString .timeout -}}
{{- if not (regexMatch "^[0-9]+s$" $t) -}}
{{- fail (printf "%s.shutdownTimeout: want whole seconds such as 30s, got %q" .name $t) -}}
{{- end -}}
{{- add (trimSuffix "s" $t | int) 15 -}}
{{- end -}}

{{/* Probes on a named port: /healthz (liveness) and /readyz (readiness). */}}
{{- define "cairn.probes" -}}
livenessProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
readinessProbe:
  httpGet: {path: /readyz, port: http}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
startupProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 2
  failureThreshold: 60
{{- end -}}

{{/* The NATS user of a service: (dict "root" $ "user" "gateway"). Its
credentials (nats.auth) and the CA of the servers (nats.tls) as env, mounts
and volumes. Each pod mounts only its own seed from the credentials Secret. */}}
{{- define "cairn.natsEnv" -}}
{{- if .root.Values.nats.auth.enabled }}
- {name: CAIRN_NATS_CREDS, value: {{ printf "/etc/cairn/nats-creds/%s.nk" .user | quote }}}
{{- end }}
{{- if .root.Values.nats.tls.enabled }}
- {name: CAIRN_NATS_CA, value: {{ printf "/etc/cairn/nats-ca/%s" .root.Values.nats.tls.caKey | quote }}}
{{- end }}
{{- end -}}

{{- define "cairn.natsMounts" -}}
{{- if .Values.nats.auth.enabled }}
- {name: nats-creds, mountPath: /etc/cairn/nats-creds, readOnly: true}
{{- end }}
{{- if .Values.nats.tls.enabled }}
- {name: nats-ca, mountPath: /etc/cairn/nats-ca, readOnly: true}
{{- end }}
{{- end -}}

{{- define "cairn.natsVolumes" -}}
{{- if .root.Values.nats.auth.enabled }}
- name: nats-creds
  secret:
    secretName: {{ required "nats.auth.existingSecret is required: a Secret with the seeds of cairn provision users" .root.Values.nats.auth.existingSecret }}
    defaultMode: 0400
    items:
      - {key: {{ printf "%s.nk" .user }}, path: {{ printf "%s.nk" .user }}}
{{- end }}
{{- if .root.Values.nats.tls.enabled }}
- name: nats-ca
  secret:
    secretName: {{ required "nats.tls.caSecret is required: a Secret with the CA of the NATS servers" .root.Values.nats.tls.caSecret }}
    defaultMode: 0444
    items:
      - {key: {{ .root.Values.nats.tls.caKey }}, path: {{ .root.Values.nats.tls.caKey }}}
{{- end }}
{{- end -}}

{{/* An MCP server's command as one --mcp word list: words with a space in
double quotes (cairn splits them back, docs/tools.md). */}}
{{- define "cairn.mcpWords" -}}
{{- $w := list }}
{{- range . }}{{ if contains " " . }}{{ $w = append $w (printf "\"%s\"" .) }}{{ else }}{{ $w = append $w . }}{{ end }}{{ end }}
{{- join " " $w }}
{{- end }}
