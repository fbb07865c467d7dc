{{/* The namespaces the operator reconciles when not cluster-wide: `operator.watchNamespaces`, else the release's. */}}
{{- define "hearth.operatorWatchNamespaces" -}}
{{- toYaml (.Values.operator.watchNamespaces | default (list .Release.Namespace)) }}
{{- end }}

{{/*
What the operator may do with hearth.gg resources (a YAML list of plurals): read and annotate them,
write their status and finalizers. It never creates or deletes one.
*/}}
{{- define "hearth.operatorResourceRules" -}}
- apiGroups: [hearth.gg]
  resources:
    {{- toYaml . | nindent 4 }}
  verbs: [get, list, watch, update, patch]
- apiGroups: [hearth.gg]
  resources:
    {{- range . }}
    - {{ . }}/status
    {{- end }}
  verbs: [get, update, patch]
- apiGroups: [hearth.gg]
  resources:
    {{- range . }}
    - {{ . }}/finalizers
    {{- end }}
  verbs: [update]
{{- end }}

{{/*
The Secrets of the server keys it mints (it cannot delete them: owner references let the garbage
collector), and the Secrets a Project names (its dashboard client secret, its store publisher key),
which it reads to carry them sealed to the API.
*/}}
{{- define "hearth.operatorSecretRule" -}}
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, update, patch]
{{- end }}

{{- define "hearth.operatorEventRule" -}}
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
