{{/* An Ingress on the hosts of `ingress.*`, from (dict "root" $ "component" "api" "path" "/" "pathType" "Prefix" "annotations" …). */}}
{{- define "hearth.ingress" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- $annotations := merge (dict) (.annotations | default dict) ($root.Values.ingress.annotations | default dict) -}}
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {{ include "hearth.componentName" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "hearth.componentLabels" $ctx | nindent 4 }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with $root.Values.ingress.className }}
  ingressClassName: {{ . }}
  {{- end }}
  {{- with $root.Values.ingress.tls }}
  tls:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  rules:
    {{- $path := .path }}
    {{- $pathType := .pathType }}
    {{- $service := include "hearth.componentName" $ctx }}
    {{- $port := .port }}
    {{- if not $root.Values.ingress.hosts }}
    {{- fail "ingress.hosts needs at least one host when ingress.enabled is true" }}
    {{- end }}
    {{- range $root.Values.ingress.hosts }}
    - host: {{ . | quote }}
      http:
        paths:
          - path: {{ $path }}
            pathType: {{ $pathType }}
            backend:
              service:
                name: {{ $service }}
                port:
                  name: {{ $port }}
    {{- end }}
{{- end }}
