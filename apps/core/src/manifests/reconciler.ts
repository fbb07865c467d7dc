/**
 * What every kind's reconciler is and shares; each kind's own is declared with the kind, in
 * kinds/<area>.ts. A reconciler translates a document into calls to the domain functions the CLI
 * also calls (tenancy/catalog.ts, auth/server-keys.ts, content/game-config-sync.ts); those write, and
 * announce their changes after the commit. A reconciler writes no row itself.
 */
import type { OwnerPlace, SyncAction } from '../content/owned-row';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal } from '../errors';
import type { Announcer } from '../invalidation';
import { type EnvironmentContext, isEnvironmentRetired, loadEnvironmentByName } from '../tenancy/environments';
import { DEFAULT_NAMESPACE, ManifestError } from './manifest-error';

export type ReconcileAction = SyncAction;
export type RemoveAction = 'removed' | 'absent';

export interface ReconcileContext {
  /** Where the domain functions announce their changes once they commit. */
  bus: Announcer;
  /** The document as refusals name it: `file.yaml#2 Project starfall/starfall`. */
  label: string;
}

/** What reconciling one document did. */
export interface ReconcileOutcome {
  action: ReconcileAction;
  /** Only when a ServerKey was minted: the whole key, shown this once. */
  serverKey?: { keyId: string; key: string };
  /** Only when a LicenceKey was minted: the whole key, shown this once. */
  licenceKey?: { keyId: string; key: string };
}

/**
 * One kind's reconciler. `reconcile` is idempotent and level-based: it makes the database match the
 * document, whatever it held before, in one transaction (the caller's when `db` is one); a refusal
 * is a ManifestError naming the document, the field and the reason. `remove` undoes what a deleted
 * document made (the operator's finalizer); a kind without it is not cleaned up on deletion yet.
 */
export interface Reconciler<D> {
  reconcile(db: Queryable, doc: D, ctx: ReconcileContext): Promise<ReconcileOutcome>;
  /**
   * For a kind with `immutable` fields: what the database holds for this document's live row (null
   * when there is none: a new document, or one deleted and created again) and what the document
   * asks for, each keyed by spec field; reconcileManifest refuses a difference in an immutable field.
   */
  identity?(db: Queryable, doc: D): Promise<Identity | null>;
  remove?(db: Queryable, ref: { namespace: string; name: string }, ctx: { bus: Announcer }): Promise<RemoveAction>;
  /**
   * For a cluster-scoped kind: the names of its live documents in the database, which an operator
   * that follows the kind (another release owns it) holds against the cluster's list, to retire the
   * ones deleted while it was not watching.
   */
  live?(db: Queryable): Promise<string[]>;
}

export function namespaceOf(doc: { metadata: { namespace?: string } }): string {
  return doc.metadata.namespace ?? DEFAULT_NAMESPACE;
}

/** A document as what it made names it: its namespace (the default one when it gives none) and name. */
export function refOf(doc: { metadata: { name: string; namespace?: string } }): { namespace: string; name: string } {
  return { namespace: namespaceOf(doc), name: doc.metadata.name };
}

/** The owner a document's rows carry: its `namespace/name`, unique across the deployment. */
export function ownerOf(ref: { namespace: string; name: string }): string {
  return `${ref.namespace}/${ref.name}`;
}

/** A document of environment content: it names its environment in `spec.environment`. */
type ContentDocument = { metadata: { name: string; namespace?: string }; spec: { environment: string } };

/**
 * The reconciler of a kind of environment content (a GameConfig, a Realm, a BlogPost...): the document
 * owns rows of the environment it names, marked with its owner. `sync` makes the owner's rows what the
 * document says (in the reconcile's transaction; its refusals named after the document); `release`
 * takes them away wherever they are, answering whether there were any; `rows`, for a kind with
 * immutable fields, says where they are (ownedRowIdentity).
 */
export function contentReconciler<D extends ContentDocument>(content: {
  sync(trx: Queryable, place: OwnerPlace, doc: D, bus: Announcer): Promise<SyncAction>;
  release(db: Queryable, owner: string, bus: Announcer): Promise<boolean>;
  rows?: { table: keyof typeof OWNED_ROWS; keyField?: string; more?: Record<string, string> };
}): Reconciler<D> {
  const { rows } = content;
  return {
    reconcile: (db, doc, { bus, label }) =>
      inTransaction(db, async (trx) => {
        const ref = refOf(doc);
        const env = await environmentNamed(trx, ref.namespace, doc.spec.environment, label);
        const place = { environmentId: env.id, owner: ownerOf(ref) };
        return { action: await refusalsNamed(label, () => content.sync(trx, place, doc, bus)) };
      }),
    ...(rows && { identity: (db: Queryable, doc: D) => ownedRowIdentity(db, rows.table, doc, rows.keyField, rows.more) }),
    remove: async (db, ref, { bus }) => ((await content.release(db, ownerOf(ref), bus)) ? 'removed' : 'absent'),
  };
}

/** The values of a document's immutable fields: in the database, and in the document (defaults applied). */
export interface Identity {
  stored: Record<string, unknown>;
  wanted: Record<string, unknown>;
}

/** Where each kind of environment content keeps its rows: the table, and the column of the key its documents give. */
const OWNED_ROWS = {
  realms: 'key',
  currencies: 'key',
  item_types: 'key',
  card_types: 'key',
  card_templates: 'key',
  skill_trees: 'key',
  legal_documents: 'document',
  tours: 'id',
  commerce_products: 'sku',
} as const;

/**
 * The identity of a document whose row is owned by `namespace/name` in a table of environment
 * content: its environment and its key, which the document gives in `keyField` (`key`; a card type's
 * `slug`, a legal document's `document`...) or as its name; `more` adds other immutable fields, each
 * read from the row by an SQL expression (a product's `storeItemId` from its definition).
 */
export async function ownedRowIdentity(
  db: Queryable,
  table: keyof typeof OWNED_ROWS,
  doc: { metadata: { name: string; namespace?: string }; spec: { environment: string } },
  keyField = 'key',
  more: Record<string, string> = {},
): Promise<Identity | null> {
  const extra = Object.entries(more).map(([field, sql]) => db.raw(`${sql} AS ??`, [field]));
  const row = (await db(`${table} as t`)
    .join('environments as e', 'e.id', 't.environment_id')
    .where('t.owner', ownerOf(refOf(doc)))
    .first('e.name as environment', `t.${OWNED_ROWS[table]} as key`, ...extra)) as ({ environment: string; key: string } & Record<string, unknown>) | undefined;
  if (!row) return null;
  const spec = doc.spec as Record<string, unknown>;
  const stored: Record<string, unknown> = { environment: row.environment, [keyField]: row.key };
  const wanted: Record<string, unknown> = { environment: spec.environment, [keyField]: spec[keyField] ?? doc.metadata.name };
  for (const field of Object.keys(more)) {
    stored[field] = row[field];
    wanted[field] = spec[field];
  }
  return { stored, wanted };
}

/**
 * The identity of a key document (a ServerKey's environment, a LicenceKey's project): the name of what
 * its live key belongs to, found by that owner's id (a retired owner too); none while it has no live key.
 */
export async function keyOwnerIdentity(db: Queryable, field: 'environment' | 'project', ownerId: number | undefined, wanted: string): Promise<Identity | null> {
  if (ownerId === undefined) return null;
  const row = (await db(field === 'environment' ? 'environments' : 'projects')
    .where({ id: ownerId })
    .first('name')) as { name: string } | undefined;
  return { stored: { [field]: row?.name }, wanted: { [field]: wanted } };
}

/**
 * The removal of a key document (a ServerKey, a LicenceKey): its live key revoked, in one transaction;
 * `absent` when it has none.
 */
export function revokeLiveKey(
  liveKeyOf: (db: Queryable, ref: { namespace: string; name: string }) => Promise<{ keyId: string } | null>,
  revoke: (db: Queryable, bus: Announcer, keyId: string) => Promise<unknown>,
): NonNullable<Reconciler<unknown>['remove']> {
  return (db, ref, { bus }) =>
    inTransaction(db, async (trx) => {
      const live = await liveKeyOf(trx, ref);
      if (!live) return 'absent';
      await revoke(trx, bus, live.keyId);
      return 'removed';
    });
}

/**
 * Runs a domain write and names its refusals after the document: an Refusal whose details.field
 * is `plan` becomes a ManifestError on `spec.plan`; one without a field falls on `fieldOtherwise`.
 */
export async function refusalsNamed<T>(label: string, write: () => Promise<T>, fieldOtherwise = 'spec'): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const field = typeof err.details?.field === 'string' ? `spec.${err.details.field}` : fieldOtherwise;
    throw new ManifestError(label, field, err.message, err.code);
  }
}

/** The environment a document's `spec.environment` names in its namespace, or a refusal on that field. */
export async function environmentNamed(db: Queryable, namespace: string, name: string, label: string): Promise<EnvironmentContext> {
  const env = await loadEnvironmentByName(db, namespace, name);
  if (env) return env;
  const retired = await isEnvironmentRetired(db, { namespace, name });
  const why = retired
    ? `names environment "${name}", which was retired (its GameEnvironment was deleted; apply it again to bring it back)`
    : `names environment "${name}", which does not exist in namespace "${namespace}"`;
  throw new ManifestError(label, 'spec.environment', why, 'not-found');
}
