{{- define "hearth.egressTo" -}}
{{- /* An egress rule to `to` peers (empty: anywhere) on `ports`. */ -}}
- ports:
    {{- range .ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
  {{- with .to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
