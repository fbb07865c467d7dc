{{/* Names and labels. */}}
{{- define "hearth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hearth.fullname" -}}
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

{{/* "<fullname>-<component>" from (dict "root" $ "component" "api"). */}}
{{- define "hearth.componentName" -}}
{{- printf "%s-%s" (include "hearth.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hearth.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hearth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "hearth.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hearth.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hearth
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of one component's objects, from (dict "root" $ "component" "api"). */}}
{{- define "hearth.componentLabels" -}}
{{ include "hearth.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "hearth.componentSelectorLabels" -}}
{{ include "hearth.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The image by digest when one is given (immutable: what was scanned is what runs), else by tag. */}}
{{- define "hearth.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "hearth.operatorServiceAccountName" -}}
{{- default (include "hearth.componentName" (dict "root" . "component" "operator")) .Values.operator.serviceAccount.name }}
{{- end }}

{{/*
The Secret and key each credential is read from: the existingSecret when one is named, else the
Secret the chart writes (secrets.yaml). A missing value stops the render with the value to set.
*/}}
{{- define "hearth.databaseSecretRef" -}}
{{- if .Values.database.existingSecret -}}
name: {{ .Values.database.existingSecret }}
key: {{ .Values.database.existingSecretKey }}
{{- else -}}
{{- $_ := required "database.url (or database.existingSecret) is required: the PostgreSQL URL Hearth keeps its data in" .Values.database.url -}}
name: {{ include "hearth.componentName" (dict "root" . "component" "database") }}
key: url
{{- end }}
{{- end }}

{{/* The migrations Job's: the existingSecret, else its hook Secret (migrations/job.yaml). */}}
{{- define "hearth.migrationsDatabaseSecretRef" -}}
{{- if .Values.database.existingSecret -}}
{{ include "hearth.databaseSecretRef" . }}
{{- else -}}
name: {{ include "hearth.componentName" (dict "root" . "component" "migrations") }}
key: url
{{- end }}
{{- end }}

{{- define "hearth.redisSecretRef" -}}
{{- if .Values.redis.existingSecret -}}
name: {{ .Values.redis.existingSecret }}
key: {{ .Values.redis.existingSecretKey }}
{{- else -}}
{{- $_ := required "redis.url (or redis.existingSecret) is required: the Redis URL of rate limits and announcements" .Values.redis.url -}}
name: {{ include "hearth.componentName" (dict "root" . "component" "redis") }}
key: url
{{- end }}
{{- end }}

{{- define "hearth.masterKeySecretRef" -}}
{{- if .Values.masterKey.existingSecret -}}
name: {{ .Values.masterKey.existingSecret }}
key: {{ .Values.masterKey.existingSecretKey }}
{{- else -}}
{{- $_ := required "masterKey.value (or masterKey.existingSecret) is required: 32 bytes, base64 or hex (openssl rand -base64 32)" .Values.masterKey.value -}}
name: {{ include "hearth.componentName" (dict "root" . "component" "master-key") }}
key: key
{{- end }}
{{- end }}

{{/*
What the pods' credentials hash to, so a change rolls them: the Secrets the chart writes, and the
data of each existingSecret named (read from the cluster with `lookup` at install and upgrade; a
`helm template` sees none). A credential rotated in an existingSecret thus rolls the pods at the
next `helm upgrade`; between upgrades see docs/kubernetes.md ("Credentials").
*/}}
{{- define "hearth.credentialsChecksum" -}}
{{- $existing := list -}}
{{- range (list .Values.database.existingSecret .Values.redis.existingSecret .Values.masterKey.existingSecret .Values.objectStorage.credentials.existingSecret) }}
{{- if . }}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace . }}
{{- $existing = append $existing (dict "name" . "data" ($secret.data | default dict)) }}
{{- end }}
{{- end }}
{{- print (include (print $.Template.BasePath "/secrets.yaml") .) (toJson $existing) | sha256sum }}
{{- end }}

{{/*
Environment of a Hearth container, from (dict "root" $ "needs" (list "database" "redis" "masterKey")
"env" (dict "PORT" "8080") "extraEnv" .Values.api.extraEnv): each process gets only the credentials
its command reads.
*/}}
{{- define "hearth.env" -}}
{{- $root := .root -}}
- name: LOG_LEVEL
  value: {{ $root.Values.config.logLevel | quote }}
- name: REDIS_PREFIX
  value: {{ $root.Values.config.redisPrefix | quote }}
{{- range $name, $value := .env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- if .podIdentity }}
# Who this pod is, for the Lease's holder identity and the namespace it lives in.
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}
{{- if has "database" .needs }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- .databaseSecretRef | default (include "hearth.databaseSecretRef" $root) | nindent 6 }}
{{- end }}
{{- if has "redis" .needs }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- include "hearth.redisSecretRef" $root | nindent 6 }}
{{- end }}
{{- if has "masterKey" .needs }}
- name: HEARTH_MASTER_KEY
  valueFrom:
    secretKeyRef:
      {{- include "hearth.masterKeySecretRef" $root | nindent 6 }}
{{- end }}
{{- if has "objectStorage" .needs }}
{{- include "hearth.objectStorageEnv" $root }}
{{- end }}
{{- with $root.Values.config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with .extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The writable /tmp of a read-only root filesystem, and the `extraVolumes` / `extraVolumeMounts` of
every Hearth pod (a CA bundle of a managed database, say).
*/}}
{{- define "hearth.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The Secret `store.publisherKey.existingSecret` names, where the API reads a Project's
`spec.store.publisherKey.secretRef` without the operator: HEARTH_STORE_SECRETS_DIR (default
/var/run/hearth/store-secrets)/<namespace>/<name>/<key>. A whole-Secret volume (no subPath), so a
rotated key reaches the files without a restart. Written only when a Secret is named.
*/}}
{{- define "hearth.storeKeyVolume" -}}
- name: store-publisher-key
  secret:
    secretName: {{ .Values.store.publisherKey.existingSecret }}
{{- end }}

{{- define "hearth.storeKeyVolumeMount" -}}
- name: store-publisher-key
  mountPath: /var/run/hearth/store-secrets/{{ .Release.Namespace }}/{{ .Values.store.publisherKey.existingSecret }}
  readOnly: true
{{- end }}

{{- define "hearth.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The object storage of the processes that keep crash uploads and symbol files (the API and the crash
workers): the variables of docs/cli.md, the key pair from the chart's Secret or an existing one. No
URL, no variables: the API then answers the crash routes with 503 `unavailable`.
*/}}
{{- define "hearth.objectStorageEnv" -}}
{{- $s := .Values.objectStorage -}}
{{- if $s.url }}
- name: OBJECT_STORAGE_URL
  value: {{ $s.url | quote }}
{{- if $s.endpoint }}
- name: S3_ENDPOINT
  value: {{ $s.endpoint | quote }}
{{- end }}
- name: S3_REGION
  value: {{ $s.region | quote }}
- name: S3_FORCE_PATH_STYLE
  value: {{ $s.forcePathStyle | toString | quote }}
{{- if or $s.credentials.existingSecret $s.credentials.accessKeyId }}
{{- $name := $s.credentials.existingSecret | default (include "hearth.componentName" (dict "root" . "component" "object-storage")) }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ ternary $s.credentials.accessKeyIdKey "access-key-id" (not (empty $s.credentials.existingSecret)) }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ ternary $s.credentials.secretAccessKeyKey "secret-access-key" (not (empty $s.credentials.existingSecret)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
"true" when the crash workers run: turned on and given an object storage to read the uploads from.
Without `objectStorage.url` a worker could only exit at start (OBJECT_STORAGE_URL is required), and
the API refuses crash uploads anyway, so none is rendered.
*/}}
{{- define "hearth.crashWorkerEnabled" -}}
{{- if and .Values.crashWorker.enabled .Values.objectStorage.url }}true{{ end }}
{{- end }}

{{/* The crash-upload jobs waiting for a worker (apps/core/src/crashes/queue.ts: schema pgboss, queue crash-upload). */}}
{{- define "hearth.crashQueueDepthQuery" -}}
SELECT count(*) FROM pgboss.job WHERE name = 'crash-upload' AND state IN ('created', 'retry')
{{- end }}

{{/*
Whether this release installs and upgrades the CRD named by (list $ "<plural>.hearth.gg"): "true"
or "". With `crds.install`, when the cluster has no such CRD yet, or has the one this release
installed (Helm's ownership annotations name this release). A CRD applied otherwise (`hearth crds |
kubectl apply -f -`, another tool) or installed by another release (in another namespace) is left to
whoever put it there: Helm would refuse to install over it. `helm template` sees no cluster: "true".
*/}}
{{- define "hearth.installsCrd" -}}
{{- $root := index . 0 -}}
{{- if $root.Values.crds.install -}}
{{- $found := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" (index . 1) -}}
{{- if not $found -}}true
{{- else -}}
{{- $annotations := $found.metadata.annotations | default dict -}}
{{- if and (eq (get $annotations "meta.helm.sh/release-name") $root.Release.Name) (eq (get $annotations "meta.helm.sh/release-namespace") $root.Release.Namespace) -}}true{{- end -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
Whether this release's operator owns the cluster-scoped Plans (writes their status and finalizer):
"true" or "". `operator.plans.statusOwner` when set; unset, whether this release installs the Plan
CRD (hearth.installsCrd): the first release owns them, a second one follows.
*/}}
{{- define "hearth.planOwner" -}}
{{- $set := .Values.operator.plans.statusOwner -}}
{{- if kindIs "bool" $set -}}{{ ternary "true" "" $set }}
{{- else -}}{{ include "hearth.installsCrd" (list . "plans.hearth.gg") }}
{{- end -}}
{{- end }}
