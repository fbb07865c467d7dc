{{/*
The plural names of the hearth.gg kinds the operator reconciles: one per kind of
apps/core/src/manifests/schemas.ts (MANIFEST_KINDS). test/chart/render.test.ts fails when this list
and the CRDs under templates/crds/ differ, so a new kind cannot be left out of the RBAC.
*/}}
{{- define "hearth.operatorResources" -}}
- plans
- projects
- gameenvironments
- serverkeys
- gameconfigs
- legaldocuments
- tours
- blogcategories
- blogposts
{{- end }}
