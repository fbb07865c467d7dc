{{/*
One Deployment of a Hearth component: the same image, the entry point chosen by args. Every
component's deployment.yaml calls this with
  (dict "root" $ "component" "api" "values" .Values.api "args" (list "api")
        "ports" (list (dict "name" "http" "port" 8080)) "env" (dict "PORT" "8080")
        "needs" (list "database" "redis" "masterKey") "serviceAccountName" "" "storeKey" true)
so security contexts, probes, spread and the knobs of a values block live in one place. `storeKey`:
the processes that call the store mount `store.publisherKey.existingSecret` (api, crash-worker).
*/}}
{{- define "hearth.deployment" -}}
{{- $root := .root -}}
{{- $v := .values -}}
{{- $ctx := dict "root" $root "component" .component -}}
{{- include "hearth.refuseReplicasWhileScaled" . -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "hearth.componentName" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "hearth.componentLabels" $ctx | nindent 4 }}
  {{- with $v.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- if not (and $v.autoscaling $v.autoscaling.enabled) }}
  replicas: {{ include "hearth.replicas" . }}
  {{- end }}
  revisionHistoryLimit: 5
  {{- with $v.strategy }}
  strategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "hearth.componentSelectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "hearth.componentSelectorLabels" $ctx | nindent 8 }}
        {{- with $root.Values.commonLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed URL or key, in the chart's Secrets or an existingSecret, rolls the pods.
        checksum/secrets: {{ include "hearth.credentialsChecksum" $root }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- if .serviceAccountName }}
      serviceAccountName: {{ .serviceAccountName }}
      automountServiceAccountToken: true
      {{- else }}
      # Only the operator talks to the Kubernetes API.
      automountServiceAccountToken: false
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $v.initContainers }}
      initContainers:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "hearth.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            {{- toYaml .args | nindent 12 }}
          env:
            {{- include "hearth.env" (dict "root" $root "needs" .needs "env" .env "extraEnv" $v.extraEnv "podIdentity" .podIdentity) | nindent 12 }}
          ports:
            {{- range .ports }}
            - name: {{ .name }}
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
          {{- with $v.startupProbe }}
          startupProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          livenessProbe:
            {{- toYaml $v.livenessProbe | nindent 12 }}
          readinessProbe:
            {{- toYaml $v.readinessProbe | nindent 12 }}
          {{- with $v.lifecycle }}
          lifecycle:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            {{- include "hearth.tmpVolumeMount" $root | nindent 12 }}
            {{- if and .storeKey $root.Values.store.publisherKey.existingSecret }}
            {{- include "hearth.storeKeyVolumeMount" $root | nindent 12 }}
            {{- end }}
      volumes:
        {{- include "hearth.tmpVolume" $root | nindent 8 }}
        {{- if and .storeKey $root.Values.store.publisherKey.existingSecret }}
        {{- include "hearth.storeKeyVolume" $root | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml $v.topologySpreadConstraints | nindent 8 }}
      {{- else if $root.Values.defaultTopologySpread }}
      topologySpreadConstraints:
        - {{- toYaml $root.Values.defaultTopologySpread | nindent 10 }}
          labelSelector:
            matchLabels:
              {{- include "hearth.componentSelectorLabels" $ctx | nindent 14 }}
      {{- end }}
{{- end }}

{{/* A Service of a component, from (dict "root" $ "component" "api" "service" .Values.api.service "ports" (list (dict "name" "http" "port" 80 "targetPort" "http"))). */}}
{{- define "hearth.service" -}}
{{- $ctx := dict "root" .root "component" .component -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "hearth.componentName" $ctx }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "hearth.componentLabels" $ctx | nindent 4 }}
    # The ServiceMonitor scrapes every Service with this label on its `metrics` port.
    hearth.gg/metrics: "true"
  {{- with .service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ .service.type | default "ClusterIP" }}
  selector:
    {{- include "hearth.componentSelectorLabels" $ctx | nindent 4 }}
  ports:
    {{- range .ports }}
    - name: {{ .name }}
      port: {{ .port }}
      targetPort: {{ .targetPort }}
      protocol: TCP
    {{- end }}
{{- end }}

{{/* HPA and PDB of a component, from (dict "root" $ "component" "api" "values" .Values.api). */}}
{{- define "hearth.hpa" -}}
{{- $ctx := dict "root" .root "component" .component -}}
{{- if .values.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "hearth.componentName" $ctx }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "hearth.componentLabels" $ctx | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "hearth.componentName" $ctx }}
  minReplicas: {{ .values.autoscaling.minReplicas }}
  maxReplicas: {{ .values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .values.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
{{- end }}

{{/*
The fewest pods a component runs: the HPA's (or KEDA's) minimum while one scales it, else its
replicas. From (dict "values" .Values.api "minReplicas" <a scaler's minimum, optional>).
*/}}
{{- define "hearth.fewestReplicas" -}}
{{- if hasKey . "minReplicas" }}{{ .minReplicas }}
{{- else if and .values.autoscaling .values.autoscaling.enabled }}{{ .values.autoscaling.minReplicas }}
{{- else }}{{ include "hearth.replicas" . }}{{ end }}
{{- end }}

{{/*
The pods of a component no scaler sizes, from (dict "component" "api" "values" .Values.api): its
`replicas`, or when that is null (the default) the chart's count for it. The one place those
counts are written.
*/}}
{{- define "hearth.replicas" -}}
{{- if kindIs "invalid" .values.replicas }}{{ get (dict "api" 2 "realtime" 2 "crash-worker" 1 "operator" 2) .component }}
{{- else }}{{ .values.replicas }}{{ end }}
{{- end }}

{{/*
A `replicas` set while a scaler (the component's HPA, or KEDA for the crash workers) decides the
number of pods would be ignored without a word: the Deployment then names no count. Refused instead,
naming the knobs that do size it. From the arguments of hearth.deployment.
*/}}
{{- define "hearth.refuseReplicasWhileScaled" -}}
{{- $v := .values -}}
{{- if and $v.autoscaling $v.autoscaling.enabled (not (kindIs "invalid" $v.replicas)) -}}
{{- $key := get (dict "api" "api" "realtime" "realtime" "crash-worker" "crashWorker" "operator" "operator") .component -}}
{{- $scaler := printf "%s.autoscaling" $key -}}
{{- if and (eq .component "crash-worker") .root.Values.crashWorkerQueueScaling.enabled }}{{ $scaler = "crashWorkerQueueScaling" }}{{ end -}}
{{- fail (printf "%s.replicas is %v, but %s is on and decides the number of %s pods: remove %s.replicas (null) and size them with %s.minReplicas and maxReplicas, or turn %s off" $key $v.replicas $scaler .component $key $scaler $scaler) -}}
{{- end -}}
{{- end }}

{{/*
A PodDisruptionBudget, only where it lets a drain evict a pod: a budget that allows no disruption
(minAvailable 1 of 1 pod) would block every node drain until someone deleted it. With
`pdb.maxUnavailable` set, that is the budget (it allows that many at any size; minAvailable is
then ignored); else `pdb.minAvailable`, written
only while the fewest pods exceed it. From (dict "root" $ "component" "api" "values" .Values.api
"minReplicas" <optional, a scaler's minimum>).
*/}}
{{- define "hearth.pdb" -}}
{{- $ctx := dict "root" .root "component" .component -}}
{{- $pdb := .values.pdb -}}
{{- if $pdb.enabled }}
{{- $fewest := include "hearth.fewestReplicas" . | atoi }}
{{- $budget := dict }}
{{- if ne (toString ($pdb.maxUnavailable | default "")) "" }}
{{- $_ := set $budget "maxUnavailable" $pdb.maxUnavailable }}
{{- else }}
{{- $min := toString $pdb.minAvailable }}
{{- $kept := 0 }}
{{- if hasSuffix "%" $min }}
{{- $kept = ceil (divf (mul $fewest (trimSuffix "%" $min | atoi)) 100) | int }}
{{- else }}
{{- $kept = atoi $min }}
{{- end }}
{{- if gt $fewest $kept }}
{{- $_ := set $budget "minAvailable" $pdb.minAvailable }}
{{- end }}
{{- end }}
{{- if $budget }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "hearth.componentName" $ctx }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "hearth.componentLabels" $ctx | nindent 4 }}
spec:
  {{- toYaml $budget | nindent 2 }}
  selector:
    matchLabels:
      {{- include "hearth.componentSelectorLabels" $ctx | nindent 6 }}
{{- end }}
{{- end }}
{{- end }}
