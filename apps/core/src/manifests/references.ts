/**
 * Which documents a document names: the `spec` fields declared with `Reference(kind, ...)`
 * (spec/names.ts), read from its kind's schema. The operator reconciles the documents naming an
 * object again when that object changes or goes, so their status follows at once (an environment
 * retired: its keys and content turn Ready=False; a plan lowered: a project over it does).
 */
import { REFERENCE_KEYWORD } from '../contract/names';
import { MANIFEST_KINDS, type ManifestKind } from './schemas';

/** One document named: its kind and `namespace/name` (a cluster-scoped kind's: its name). */
export interface DocumentRef {
  kind: ManifestKind;
  key: string;
}

type JsonSchema = Record<string, any>;

/** The reference fields of each kind's spec: field -> the kind it names. */
const REFERENCE_FIELDS = new Map(
  (Object.keys(MANIFEST_KINDS) as ManifestKind[]).map((kind) => {
    const spec = (MANIFEST_KINDS[kind].schema as unknown as JsonSchema).properties.spec as JsonSchema;
    const fields = Object.entries((spec.properties ?? {}) as Record<string, JsonSchema>)
      .filter(([, child]) => typeof child[REFERENCE_KEYWORD] === 'string')
      .map(([field, child]) => ({ field, kind: child[REFERENCE_KEYWORD] as ManifestKind }));
    return [kind, fields] as const;
  }),
);

/** The key of a document of `kind` named `name` from a document of `namespace`. */
export function documentKey(kind: ManifestKind, namespace: string | undefined, name: string): string {
  return MANIFEST_KINDS[kind].namespaced && namespace ? `${namespace}/${name}` : name;
}

/** The reference fields of a kind's spec, each with the kind it names (`environment` → GameEnvironment). */
export function referenceFields(kind: ManifestKind): readonly { field: string; kind: ManifestKind }[] {
  return REFERENCE_FIELDS.get(kind) ?? [];
}

/** The documents an object of `kind` names in its spec (as written; an unvalidated spec gives what it can). */
export function referencesOf(kind: ManifestKind, obj: { metadata: { namespace?: string }; spec?: unknown }): DocumentRef[] {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  return (REFERENCE_FIELDS.get(kind) ?? [])
    .filter(({ field }) => typeof spec[field] === 'string')
    .map(({ field, kind: target }) => ({ kind: target, key: documentKey(target, obj.metadata.namespace, spec[field] as string) }));
}

/** The kinds a kind's documents name. */
export function kindsReferencedBy(kind: ManifestKind): ManifestKind[] {
  return [...new Set((REFERENCE_FIELDS.get(kind) ?? []).map((r) => r.kind))];
}
