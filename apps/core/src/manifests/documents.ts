/**
 * The documents as applied: every document `hearth apply` or the operator reconciled, kept as it was
 * last reconciled (table manifest_documents), with the status Hearth can tell from the database. What
 * `hearth get` and `hearth describe` read (docs/cli.md), the same for every kind: the kind's CRD says
 * the columns, references.ts the references.
 *
 * A document is recorded in its reconcile's own transaction, so a refused one leaves the last one
 * that was reconciled; `generation` counts the changes of its spec, as Kubernetes' does. A deleted
 * document (removeManifest) keeps its row, marked removed, so what still names it reads as such.
 */
import type { Queryable } from '../db/knex';
import { liveKeyOfManifest } from '../auth/server-keys';
import { liveLicenceKeyOfManifest } from '../licence/keys';
import { referenceFields } from './references';
import { API_VERSION } from './kind';
import { type AnyManifest, MANIFEST_KINDS, type ManifestKind } from './schemas';
import type { Condition } from './status';
import { yaml } from './yaml';

const TABLE = 'manifest_documents';
/** What kubectl adds to every object it applies: a copy of the document, not something the document says. */
const KUBECTL_LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The namespace column of a document: '' for a cluster-scoped kind. */
function namespaceKey(kind: ManifestKind, namespace: string | null | undefined): string {
  return MANIFEST_KINDS[kind].namespaced ? (namespace ?? '') : '';
}

/** Records a document reconciled into the database (reconcileManifest calls it in its transaction); a document unchanged writes nothing. */
export async function recordAppliedManifest(db: Queryable, doc: AnyManifest, namespace: string | null): Promise<void> {
  const metadata = doc.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const { [KUBECTL_LAST_APPLIED]: _copy, ...annotations } = metadata.annotations ?? {};
  await db.raw(
    `INSERT INTO ${TABLE} AS d (kind, namespace, name, labels, annotations, spec) VALUES (?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb)
     ON CONFLICT (kind, namespace, name) DO UPDATE SET
       generation = CASE WHEN d.removed_at IS NOT NULL THEN 1 WHEN d.spec IS DISTINCT FROM excluded.spec THEN d.generation + 1 ELSE d.generation END,
       created_at = CASE WHEN d.removed_at IS NOT NULL THEN now() ELSE d.created_at END,
       labels = excluded.labels, annotations = excluded.annotations, spec = excluded.spec, updated_at = now(), removed_at = NULL
     WHERE d.removed_at IS NOT NULL OR (d.spec, d.labels, d.annotations) IS DISTINCT FROM (excluded.spec, excluded.labels, excluded.annotations)`,
    [
      doc.kind,
      namespaceKey(doc.kind, namespace),
      doc.metadata.name,
      JSON.stringify(metadata.labels ?? {}),
      JSON.stringify(annotations),
      JSON.stringify(doc.spec),
    ],
  );
}

/** Marks a document deleted (removeManifest calls it once the kind's clean-up has run). */
export async function forgetAppliedManifest(db: Queryable, ref: { kind: ManifestKind; namespace: string | null; name: string }): Promise<void> {
  await db(TABLE)
    .where({ kind: ref.kind, namespace: namespaceKey(ref.kind, ref.namespace), name: ref.name })
    .whereNull('removed_at')
    .update({ removed_at: db.fn.now() });
}

/** The status of a document applied: the generation reconciled, its Ready condition, and what its kind adds (a key's id). */
export interface AppliedStatus {
  observedGeneration: number;
  conditions: Condition[];
  keyId?: string;
}

/** A document applied, as a manifest of its kind (what `kubectl get -o yaml` prints for it in a cluster). */
export interface AppliedManifest {
  apiVersion: string;
  kind: ManifestKind;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    generation: number;
    creationTimestamp: string;
  };
  spec: Record<string, unknown>;
  status: AppliedStatus;
}

interface Row {
  kind: ManifestKind;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
  generation: string | number;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

/** A document another names or is named by: its kind and name, the field that names it, and whether it is applied. */
export interface ManifestLink {
  kind: ManifestKind;
  namespace: string | null;
  name: string;
  /** The field of the naming document's spec (`spec.environment`). */
  field: string;
  /** applied; deleted (its document was deleted); unknown (never recorded: not applied, or applied before Hearth kept documents). */
  state: 'applied' | 'deleted' | 'unknown';
}

/** The keys' kinds: their status says the live key's id, as the operator writes it; a document whose key was revoked is not Ready. */
const LIVE_KEY_OF: Partial<Record<ManifestKind, (db: Queryable, manifest: { namespace: string; name: string }) => Promise<{ keyId: string } | null>>> = {
  ServerKey: liveKeyOfManifest,
  LicenceKey: liveLicenceKeyOfManifest,
};

/**
 * The documents of `kind` applied and not deleted: in `namespace` (every namespace when null; a
 * cluster-scoped kind has none), only the one named `name` when given; by namespace, then name.
 */
export async function listAppliedManifests(db: Queryable, kind: ManifestKind, where: { namespace: string | null; name?: string }): Promise<AppliedManifest[]> {
  const query = db(TABLE).where({ kind }).whereNull('removed_at');
  if (where.namespace !== null) query.where({ namespace: namespaceKey(kind, where.namespace) });
  if (where.name !== undefined) query.where({ name: where.name });
  const rows = (await query.orderBy([{ column: 'namespace' }, { column: 'name' }])) as Row[];
  const records = await recordsOf(
    db,
    rows.flatMap((row) => linksFrom(row)),
  );
  const out: AppliedManifest[] = [];
  for (const row of rows) out.push(await manifestOf(db, row, records));
  return out;
}

/** The namespaces other than `namespace` holding a document of `kind` named `name`, and whether `namespace` held one now deleted. */
export async function appliedManifestElsewhere(
  db: Queryable,
  kind: ManifestKind,
  namespace: string,
  name: string,
): Promise<{ namespaces: string[]; deletedAt: Date | null }> {
  const rows = (await db(TABLE).where({ kind, name }).select('namespace', 'removed_at')) as { namespace: string; removed_at: Date | null }[];
  const here = rows.find((r) => r.namespace === namespaceKey(kind, namespace));
  return {
    namespaces: rows
      .filter((r) => r.removed_at === null && r.namespace !== namespaceKey(kind, namespace))
      .map((r) => r.namespace)
      .sort(),
    deletedAt: here?.removed_at ?? null,
  };
}

/** What a document names (its reference fields) and what names it (documents applied whose reference fields name it). */
export async function appliedManifestLinks(db: Queryable, manifest: AppliedManifest): Promise<{ refersTo: ManifestLink[]; referredBy: ManifestLink[] }> {
  const row = { kind: manifest.kind, namespace: manifest.metadata.namespace ?? '', spec: manifest.spec };
  const links = linksFrom(row);
  const refersTo = withState(links, await recordsOf(db, links));
  const referredBy: ManifestLink[] = [];
  for (const kind of Object.keys(MANIFEST_KINDS) as ManifestKind[]) {
    for (const { field, kind: target } of referenceFields(kind)) {
      if (target !== manifest.kind) continue;
      const query = db(TABLE).where({ kind }).whereNull('removed_at').whereRaw('spec ->> ? = ?', [field, manifest.metadata.name]);
      // A namespaced document names one in its own namespace; a cluster-scoped one is named from every namespace.
      if (MANIFEST_KINDS[target].namespaced) query.where({ namespace: manifest.metadata.namespace ?? '' });
      const rows = (await query.orderBy([{ column: 'namespace' }, { column: 'name' }]).select('namespace', 'name')) as { namespace: string; name: string }[];
      referredBy.push(...rows.map((r) => ({ kind, namespace: r.namespace || null, name: r.name, field: `spec.${field}`, state: 'applied' as const })));
    }
  }
  return { refersTo, referredBy };
}

/** The documents a row's spec names, state not yet known. */
function linksFrom(row: { kind: ManifestKind; namespace: string; spec: Record<string, unknown> }): ManifestLink[] {
  return referenceFields(row.kind)
    .filter(({ field }) => typeof row.spec[field] === 'string')
    .map(({ field, kind }) => ({
      kind,
      namespace: MANIFEST_KINDS[kind].namespaced ? row.namespace : null,
      name: row.spec[field] as string,
      field: `spec.${field}`,
      state: 'unknown' as const,
    }));
}

/** Whether each document the links name is recorded (key → when it was deleted, null while applied), in one query. */
async function recordsOf(db: Queryable, links: ManifestLink[]): Promise<Map<string, Date | null>> {
  if (links.length === 0) return new Map();
  const tuples = [...new Map(links.map((l) => [linkKey(l), [l.kind, l.namespace ?? '', l.name]])).values()];
  const rows = (await db(TABLE).whereIn(['kind', 'namespace', 'name'], tuples).select('kind', 'namespace', 'name', 'removed_at')) as {
    kind: ManifestKind;
    namespace: string;
    name: string;
    removed_at: Date | null;
  }[];
  return new Map(rows.map((r) => [linkKey({ kind: r.kind, namespace: r.namespace || null, name: r.name }), r.removed_at]));
}

function withState(links: ManifestLink[], records: Map<string, Date | null>): ManifestLink[] {
  return links.map((l) => {
    const removed = records.get(linkKey(l));
    return { ...l, state: removed === undefined ? 'unknown' : removed === null ? 'applied' : 'deleted' };
  });
}

function linkKey(l: { kind: ManifestKind; namespace: string | null; name: string }): string {
  return `${l.kind}\u0000${l.namespace ?? ''}\u0000${l.name}`;
}

const READY_MESSAGE = 'the database matches the spec as it was last applied';

/** A row as a manifest, its status told from the database: not Ready while a document it names is deleted, or its key was revoked. */
async function manifestOf(db: Queryable, row: Row, records: Map<string, Date | null>): Promise<AppliedManifest> {
  const generation = Number(row.generation);
  const namespaced = MANIFEST_KINDS[row.kind].namespaced;
  const ready = (status: Condition['status'], reason: string, message: string, at: Date): Condition => ({
    type: 'Ready',
    status,
    reason,
    message,
    lastTransitionTime: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    observedGeneration: generation,
  });
  const gone = withState(linksFrom(row), records).find((l) => l.state === 'deleted');
  let condition = ready('True', 'Reconciled', READY_MESSAGE, row.updated_at);
  const status: AppliedStatus = { observedGeneration: generation, conditions: [] };
  const liveKeyOf = LIVE_KEY_OF[row.kind];
  if (liveKeyOf) {
    const live = await liveKeyOf(db, { namespace: row.namespace, name: row.name });
    if (live) status.keyId = live.keyId;
    else condition = ready('False', 'KeyRevoked', 'its key was revoked; apply the document again to mint a new one', row.updated_at);
  }
  if (gone) {
    const at = records.get(linkKey(gone)) ?? row.updated_at;
    const named = gone.namespace ? `${gone.kind} ${gone.namespace}/${gone.name}` : `${gone.kind} ${gone.name}`;
    condition = ready('False', 'MissingReference', `${gone.field} names ${named}, which was deleted`, at > row.updated_at ? at : row.updated_at);
  }
  status.conditions.push(condition);
  return sortedKeys({
    apiVersion: API_VERSION,
    kind: row.kind,
    metadata: {
      name: row.name,
      ...(namespaced ? { namespace: row.namespace } : {}),
      ...(Object.keys(row.labels).length > 0 ? { labels: row.labels } : {}),
      ...(Object.keys(row.annotations).length > 0 ? { annotations: row.annotations } : {}),
      generation,
      creationTimestamp: row.created_at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
    spec: row.spec,
    status,
  });
}

/**
 * The value with every object's keys in order, as Kubernetes prints an object (its JSON is Go's,
 * whose maps marshal sorted); PostgreSQL's jsonb keeps keys in an order of its own.
 */
function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)])) as T;
}

/** Documents as YAML, as `kubectl get -o yaml` prints them (long strings on one line). */
export function manifestYaml(value: unknown): string {
  return yaml().stringify(value, { lineWidth: 0 });
}
