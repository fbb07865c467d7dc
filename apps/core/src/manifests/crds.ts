/**
 * The CustomResourceDefinitions of every manifest kind, generated from the same TypeBox schemas
 * `hearth apply` validates with (schemas.ts), so the two cannot say different things. `hearth crds`
 * prints them for `kubectl apply -f -` and writes the chart's templates (charts/hearth/templates/crds/);
 * a test fails when the chart's copy and the schemas drift.
 *
 * A CRD's schema must be *structural* (Kubernetes' rules for openAPIV3Schema): every node has a
 * type, no $ref, const, if/then, patternProperties or additionalProperties: false (pruning drops
 * unknown fields, and kubectl's strict field validation refuses them), unions only as value checks.
 * `structural()` translates the JSON Schema TypeBox makes into that subset; what cannot be said there
 * (a block whose fields depend on its `type`) keeps its structure with looser bounds, and the
 * operator holds the document to the whole schema (a refusal is a Ready=False condition naming the
 * field, as `hearth apply` names it).
 */
import type { TSchema } from '@sinclair/typebox';
import { API_VERSION, type PrinterColumn } from './kind';
import { MANIFEST_KINDS, type ManifestKind } from './schemas';
import { resourceStatus } from './status';
import { yaml } from './yaml';
import { RULES_KEYWORD, immutableRules } from '../contract/rules';

export const API_GROUP = API_VERSION.split('/')[0];
export const API_GROUP_VERSION = API_VERSION.split('/')[1];
/** `kubectl get hearth` lists every Hearth resource. */
export const CRD_CATEGORY = 'hearth';

type JsonSchema = Record<string, any>;

/** Keywords a structural schema keeps as they are. */
const KEPT = [
  'description',
  'format',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'enum',
  'required',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
] as const;

function typeOfValue(value: unknown): string {
  if (Number.isInteger(value)) return 'integer';
  if (typeof value === 'number') return 'number';
  return typeof value; // string, boolean
}

const ANYTHING = { 'x-kubernetes-preserve-unknown-fields': true } as const;

/** One JSON Schema node (TypeBox's output) as a structural schema node. */
export function structural(schema: JsonSchema): JsonSchema {
  // A union: of literals → an enum; with null → nullable; of several shapes → any value, checked by Hearth.
  const union = schema.anyOf ?? schema.oneOf;
  if (union) {
    const members = (union as JsonSchema[]).filter((m) => m.type !== 'null');
    const nullable = members.length < union.length ? { nullable: true } : {};
    const description = schema.description ? { description: schema.description } : {};
    if (members.every((m) => m.const !== undefined) && new Set(members.map((m) => typeOfValue(m.const))).size === 1) {
      return { type: typeOfValue(members[0].const), enum: members.map((m) => m.const), ...description, ...nullable };
    }
    if (members.length === 1) return { ...structural(members[0]), ...description, ...nullable };
    return { ...description, ...ANYTHING, ...nullable };
  }
  if (schema.const !== undefined) return { type: typeOfValue(schema.const), enum: [schema.const], ...pick(schema, ['description']) };
  // if/then per variant (a blog block): the fields of every variant, bounds kept only where all agree.
  if (Array.isArray(schema.allOf) && schema.allOf.every((part: JsonSchema) => part.then)) {
    return mergedVariants(schema);
  }

  const out: JsonSchema = { type: schema.type, ...pick(schema, KEPT) };
  if (schema.type === 'object') {
    if (schema.properties && Object.keys(schema.properties).length > 0) {
      out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, JsonSchema>).map(([k, v]) => [k, structural(v)]));
      // Fields marked immutable: a transition rule on the object holding them (it sees an optional field come and go).
      const identity = immutableRules(schema);
      if (identity.length > 0) out[RULES_KEYWORD] = [...(out[RULES_KEYWORD] ?? []), ...identity];
    } else if (schema.patternProperties) {
      // TypeBox's Record: any key, each value of one schema.
      out.additionalProperties = structural(Object.values(schema.patternProperties as Record<string, JsonSchema>)[0]);
    } else if (typeof schema.additionalProperties === 'object') {
      out.additionalProperties = structural(schema.additionalProperties);
    } else if (schema.additionalProperties !== false) {
      // An open object (a provider's settings): kept as written.
      Object.assign(out, ANYTHING);
    }
  } else if (schema.type === 'array') {
    out.items = structural(schema.items);
  } else if (schema.type === undefined) {
    return { ...pick(schema, ['description']), ...ANYTHING };
  }
  if (out.default !== undefined && schema.type === 'object') delete out.default;
  return out;
}

function pick(schema: JsonSchema, keys: readonly string[]): JsonSchema {
  return Object.fromEntries(keys.filter((k) => schema[k] !== undefined).map((k) => [k, schema[k]]));
}

/** The union of the variants' fields: a field the variants describe alike keeps its bounds, else only its type. */
function mergedVariants(schema: JsonSchema): JsonSchema {
  const variants = (schema.allOf as JsonSchema[]).map((part) => structural(part.then));
  const fields = new Map<string, JsonSchema[]>();
  for (const variant of variants) {
    for (const [field, node] of Object.entries((variant.properties ?? {}) as Record<string, JsonSchema>)) {
      fields.set(field, [...(fields.get(field) ?? []), node]);
    }
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [field, nodes] of fields) {
    const alike = nodes.every((n) => JSON.stringify(n) === JSON.stringify(nodes[0]));
    // Bounds that differ between variants are dropped; the first variant's description says what the field is.
    const description = pick(nodes.find((n) => n.description) ?? {}, ['description']);
    if (field === 'type') properties.type = structural(schema.properties.type);
    else if (alike) properties[field] = nodes[0];
    else if (new Set(nodes.map((n) => n.type)).size === 1)
      properties[field] = { type: nodes[0].type, ...description, ...(nodes[0].items ? { items: { type: nodes[0].items.type } } : {}) };
    else properties[field] = { ...description, ...ANYTHING };
  }
  return { type: 'object', ...pick(schema, ['description', 'required']), properties };
}

const READY_COLUMNS: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
];

/** A column of `kubectl get`, as a CRD declares it: a printer column of a kind, or the Age every kind ends with. */
export type CrdPrinterColumn = Omit<PrinterColumn, 'type'> & { type: PrinterColumn['type'] | 'date' };

/**
 * The columns `kubectl get` shows for a kind besides NAME (and NAMESPACE): its own, Ready (and Reason
 * with `-o wide`), Age. The CRD declares them from here, and `hearth get` prints them from here.
 */
export function printerColumns(kind: ManifestKind): CrdPrinterColumn[] {
  const columns: readonly PrinterColumn[] = MANIFEST_KINDS[kind].crd.columns;
  return [...columns.map((c) => ({ ...c })), ...READY_COLUMNS.map((c) => ({ ...c })), { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
}

/**
 * One version of the kinds' API as a CRD lists it (docs/kubernetes.md "API versions"): served or not,
 * and the one version objects are stored in. Every version has the same schema, so the API server's
 * conversion between them (strategy None) changes only `apiVersion`, and no webhook is needed.
 */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** Served, with this warning on every request that names it (the version on its way out). */
  deprecationWarning?: string;
}

/** What the chart ships: v1alpha1 alone, served and stored. */
export const SHIPPED_CRD_VERSIONS: readonly CrdVersion[] = [{ name: API_GROUP_VERSION, served: true, storage: true }];

export interface CrdOptions {
  /** What the chart's copy carries besides (kept on uninstall). */
  helm?: boolean;
  /** The versions listed, each with the same schema; SHIPPED_CRD_VERSIONS unless given (the tests of a version upgrade give more). */
  versions?: readonly CrdVersion[];
}

/** The CRD of one kind. */
export function customResourceDefinition(kind: ManifestKind, options: CrdOptions = {}): JsonSchema {
  const versions = options.versions ?? SHIPPED_CRD_VERSIONS;
  if (versions.filter((v) => v.storage).length !== 1) throw new Error(`a CRD stores objects in exactly one version; given ${JSON.stringify(versions)}`);
  const facts = MANIFEST_KINDS[kind];
  const crd: { plural: string; shortNames: readonly string[]; columns: readonly PrinterColumn[]; status?: Record<string, TSchema> } = facts.crd;
  const documentSchema = facts.schema as unknown as JsonSchema;
  const status = structural(resourceStatus(crd.status ?? {}) as unknown as JsonSchema);
  // Conditions are a map keyed by type, as metav1.Condition lists are (server-side apply merges by type).
  Object.assign(status.properties.conditions, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
  status.properties.conditions.items.required = ['type', 'status', 'reason', 'message', 'lastTransitionTime'];
  const name = `${crd.plural}.${API_GROUP}`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name,
      ...(options.helm ? { annotations: { 'helm.sh/resource-policy': 'keep' } } : {}),
      labels: { 'app.kubernetes.io/part-of': 'hearth' },
    },
    spec: {
      group: API_GROUP,
      scope: facts.namespaced ? 'Namespaced' : 'Cluster',
      names: {
        kind,
        listKind: `${kind}List`,
        plural: crd.plural,
        singular: kind.toLowerCase(),
        shortNames: [...crd.shortNames],
        categories: [CRD_CATEGORY],
      },
      // Each version its own copy: YAML would write an object met twice as an anchor and an alias.
      versions: versions.map((version) =>
        structuredClone({
          name: version.name,
          served: version.served,
          storage: version.storage,
          ...(version.deprecationWarning ? { deprecated: true, deprecationWarning: version.deprecationWarning } : {}),
          subresources: { status: {} },
          additionalPrinterColumns: printerColumns(kind),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `A Hearth ${kind} (docs/manifests.md).`,
              required: ['spec'],
              properties: {
                spec: { description: `what the ${kind} declares (docs/manifests.md)`, ...structural(documentSchema.properties.spec) },
                status,
              },
            },
          },
        }),
      ),
    },
  };
}

/** Every kind's CRD, in MANIFEST_KINDS' order. */
export function customResourceDefinitions(options: CrdOptions = {}): JsonSchema[] {
  return (Object.keys(MANIFEST_KINDS) as ManifestKind[]).map((kind) => customResourceDefinition(kind, options));
}

/** All CRDs as one multi-document YAML stream, for `kubectl apply -f -`. */
export function crdsYaml(options: CrdOptions = {}): string {
  return customResourceDefinitions(options)
    .map((crd) => yaml().stringify(crd, { lineWidth: 0 }))
    .join('---\n');
}

/** The folder of the chart the CRD templates live in, and the file of each. */
export const CHART_CRD_DIR = 'templates/crds';
export function chartCrdFile(kind: ManifestKind): string {
  return `${CHART_CRD_DIR}/${MANIFEST_KINDS[kind].crd.plural}.yaml`;
}

/**
 * The chart's CRD templates (path under the chart → text), and the list of their plurals the
 * operator's RBAC grants: each CRD installed and upgraded with the release while `crds.install` is
 * on and no other tool or release owns it (`hearth crds | kubectl apply` first, or a release in
 * another namespace: Helm would refuse to take it over), and kept when the release is uninstalled
 * (deleting a CRD deletes every resource of it, and with them, through the finalizers, what they made).
 */

/** A named template of the plurals of the kinds `keep` selects, as a YAML list. */
function resourceList(name: string, keep: (kind: (typeof MANIFEST_KINDS)[keyof typeof MANIFEST_KINDS]) => boolean): string {
  const plurals = Object.values(MANIFEST_KINDS)
    .filter(keep)
    .map((k) => `- ${k.crd.plural}`);
  return `{{- define "${name}" -}}\n${plurals.join('\n')}\n{{- end }}\n`;
}

export function chartCrdTemplates(): Map<string, string> {
  const files = new Map<string, string>();
  for (const kind of Object.keys(MANIFEST_KINDS) as ManifestKind[]) {
    const body = yaml().stringify(customResourceDefinition(kind, { helm: true }), { lineWidth: 0 });
    // Helm reads the file as a template: nothing of the schema may look like an action.
    if (body.includes('{{')) throw new Error(`the ${kind} CRD contains "{{", which Helm would read as a template action`);
    files.set(
      chartCrdFile(kind),
      `# Generated by \`hearth crds --chart charts/hearth\` from apps/core/src/manifests/schemas.ts: do not edit.\n` +
        // Installed by this release unless another tool or release owns it (hearth.installsCrd in _helpers.tpl).
        `{{- if include "hearth.installsCrd" (list . ${JSON.stringify(MANIFEST_KINDS[kind].crd.plural + '.' + API_GROUP)}) }}\n${body}{{- end }}\n`,
    );
  }
  // The operator's RBAC names every kind's resource; written here so a new kind cannot be left out.
  files.set(
    `${CHART_CRD_DIR}/_resources.tpl`,
    `{{/* Generated by \`hearth crds --chart charts/hearth\`: the plural of every hearth.gg kind, for the operator's RBAC (all, the namespaced and the cluster-scoped). */}}\n` +
      resourceList('hearth.operatorResources', () => true) +
      resourceList('hearth.operatorNamespacedResources', (k) => k.namespaced) +
      resourceList('hearth.operatorClusterResources', (k) => !k.namespaced),
  );
  return files;
}
