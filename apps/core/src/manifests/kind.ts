/**
 * How a kind is declared (manifestKind): its documents' schema, its spec from contract/ inside
 * apiVersion and metadata; what its CRD adds; its reconciler. Each area declares its kinds with it in
 * kinds/<area>.ts, and schemas.ts gathers them into MANIFEST_KINDS. Nothing here imports that list,
 * so a kind's file and what validates its documents never import each other.
 */
import { type Static, type TLiteral, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { ResourceName } from '../contract/names';
import type { Reconciler } from './reconciler';

export const API_VERSION = 'hearth.gg/v1alpha1';

const Name = ResourceName;

const Metadata = (namespaced: boolean) =>
  Type.Object(
    {
      name: Name,
      ...(namespaced ? { namespace: Type.Optional(Name) } : {}),
      labels: Type.Optional(Type.Record(Type.String(), Type.String())),
      annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
    },
    { additionalProperties: true },
  );

/** The schema of a kind's documents: its spec inside apiVersion and metadata. */
export type KindSchema<K extends string, S extends TSchema> = TObject<{
  apiVersion: TLiteral<typeof API_VERSION>;
  kind: TLiteral<K>;
  metadata: ReturnType<typeof Metadata>;
  spec: S;
}>;

/** A document of a kind, from its schema. */
export type KindDocument<K extends string, S extends TSchema> = Static<KindSchema<K, S>>;

function kind<K extends string, S extends TSchema>(kindName: K, spec: S, namespaced: boolean): KindSchema<K, S> {
  return Type.Object(
    {
      apiVersion: Type.Literal(API_VERSION),
      kind: Type.Literal(kindName),
      metadata: Metadata(namespaced),
      spec,
    },
    { additionalProperties: true },
  );
}

/**
 * A printer column of `kubectl get` (besides Ready and Age, which every kind shows). No `date`:
 * kubectl prints a date column as an age, and a time to come as `<invalid>`; a time is a string.
 */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'boolean';
  jsonPath: string;
  priority?: number;
}

/** What a kind's CRD adds to its schema (crds.ts): plural, short names, printer columns, status fields. */
export interface CrdParts {
  plural: string;
  shortNames: string[];
  columns: PrinterColumn[];
  status?: Record<string, TSchema>;
}

/** A kind of MANIFEST_KINDS: its documents' schema, its scope, its CRD's parts and its reconciler. */
export interface ManifestKindOf<K extends string, S extends TSchema> {
  schema: KindSchema<K, S>;
  namespaced: boolean;
  crd: CrdParts;
  reconciler: Reconciler<KindDocument<K, S>>;
}

/**
 * A kind, declared once by its area (kinds/<area>.ts). The reconciler is typed by the kind's
 * documents; a cluster-scoped kind (a Plan) says `namespaced: false`.
 */
export function manifestKind<K extends string, S extends TSchema>(
  kindName: K,
  spec: S,
  parts: { crd: CrdParts; reconciler: Reconciler<KindDocument<K, S>>; namespaced?: boolean },
): ManifestKindOf<K, S> {
  const namespaced = parts.namespaced ?? true;
  return { schema: kind(kindName, spec, namespaced), namespaced, crd: parts.crd, reconciler: parts.reconciler };
}

/** The printer column of a spec field. */
export function specColumn(name: string, type: PrinterColumn['type'], field: string, priority?: number): PrinterColumn {
  return { name, type, jsonPath: `.spec.${field}`, ...(priority === undefined ? {} : { priority }) };
}

export const ENVIRONMENT_COLUMN = specColumn('Environment', 'string', 'environment');
export const ENABLED_COLUMN = specColumn('Enabled', 'boolean', 'enabled');
export const PROJECT_COLUMN = specColumn('Project', 'string', 'project');

/**
 * A key document's (ServerKey, LicenceKey) columns, its owner's and then its live key's, and its
 * status: the key's id and the Secret that holds the whole key.
 */
export function keyDocument(owner: PrinterColumn, keyPrefix: string): Pick<CrdParts, 'columns' | 'status'> {
  return {
    columns: [owner, { name: 'Key ID', type: 'string', jsonPath: '.status.keyId' }, { name: 'Secret', type: 'string', jsonPath: '.status.secretName' }],
    status: {
      keyId: Type.String({ description: `the key id (the part after ${keyPrefix}); the whole key is only in the Secret` }),
      secretName: Type.String({ description: 'the Secret in this namespace that holds the whole key' }),
    },
  };
}
