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
Secrets, in the namespaces it reconciles:
- create, and patch: the key Secrets it writes (a ServerKey's, a LicenceKey's): written, re-written
  with a new key, their finalizer (hearth.gg/key-secret) added and taken off. Never update or delete:
  the garbage collector deletes them with their owner. The names are generated from the resources'
  names, so `resourceNames` cannot list them; the ValidatingAdmissionPolicy of secret-policy.yaml
  limits create and patch to Secrets it owns instead.
- get: those, and the Secrets a Project names (its dashboard client secret, its store publisher
  key), whose values it uses only when the Secret is labelled `hearth.gg/secret-for: <project>`.
- list, watch: its Secret watches (by label: its own, and those opted in for a Project). RBAC cannot
  limit either to a label, so both reach every Secret of the namespace (docs/kubernetes.md).
*/}}
{{- define "hearth.operatorSecretRule" -}}
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, patch]
{{- end }}

{{- define "hearth.operatorEventRule" -}}
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
