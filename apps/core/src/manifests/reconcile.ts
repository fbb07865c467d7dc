/**
 * Reconciling documents through their kind's reconciler (declared with the kind, in kinds/<area>.ts):
 * one document (what the operator's controller calls per object), a batch in dependency order
 * (`hearth apply`), and the clean-up of a deleted document (the operator's finalizer).
 */
import type { Queryable } from '../db/knex';
import type { Announcer } from '../invalidation';
import type { ReconcileAction, RemoveAction } from './reconciler';
import { type AnyManifest, MANIFEST_KINDS, type ManifestKind, reconcilerOf } from './schemas';
import { DEFAULT_NAMESPACE, ManifestError, describeDocument } from './manifest-error';
import { immutableFields, immutableMessage } from '../contract/rules';
import { inTransaction } from '../db/transaction';
import { forgetAppliedManifest, recordAppliedManifest } from './documents';

export interface ReconcileResult {
  kind: ManifestKind;
  namespace: string | null;
  name: string;
  action: ReconcileAction;
  /** Only when a ServerKey was minted: the whole key, shown this once. */
  serverKey?: { keyId: string; key: string };
  /** Only when a LicenceKey was minted: the whole key, shown this once. */
  licenceKey?: { keyId: string; key: string };
}

function namespaceFor(kind: ManifestKind, namespace: string | undefined): string | null {
  return MANIFEST_KINDS[kind].namespaced ? (namespace ?? DEFAULT_NAMESPACE) : null;
}

/**
 * Makes the database match one validated document (validateManifest), in one transaction (the
 * caller's when `db` is one); the changes are announced on `bus` once that commits.
 */
export async function reconcileManifest(db: Queryable, doc: AnyManifest, bus: Announcer, origin?: string): Promise<ReconcileResult> {
  const kind = doc.kind;
  const label = describeDocument(doc, origin);
  const namespace = namespaceFor(kind, 'namespace' in doc.metadata ? doc.metadata.namespace : undefined);
  const outcome = await inTransaction(db, async (trx) => {
    await refuseIdentityChange(trx, doc, label);
    const reconciled = await reconcilerOf(kind).reconcile(trx, doc, { bus, label });
    // The document as applied, for `hearth get` and `hearth describe` (documents.ts).
    await recordAppliedManifest(trx, doc, namespace);
    return reconciled;
  });
  return { kind, namespace, name: doc.metadata.name, ...outcome };
}

/**
 * Refuses a document that changes an `immutable` field of its kind's spec (spec/rules.ts) from what
 * the database holds for it: the same rule the CRD's transition rules give the API server, for
 * `hearth apply` and for a cluster whose CRDs predate it.
 */
async function refuseIdentityChange(db: Queryable, doc: AnyManifest, label: string): Promise<void> {
  const fields = immutableFields((MANIFEST_KINDS[doc.kind].schema as unknown as { properties: { spec: Record<string, unknown> } }).properties.spec);
  if (fields.length === 0) return;
  const identity = reconcilerOf(doc.kind).identity;
  if (!identity) throw new Error(`${doc.kind} declares immutable fields but its reconciler reads no identity`);
  const held = await identity(db, doc as never);
  if (!held) return;
  for (const { field, note } of fields) {
    if (held.stored[field] !== held.wanted[field]) {
      throw new ManifestError(label, `spec.${field}`, `${immutableMessage(note)} (it is ${JSON.stringify(held.stored[field])})`);
    }
  }
}

/** Reconciles documents in dependency order (MANIFEST_KINDS' order), all in the caller's transaction. */
export async function reconcileAll(db: Queryable, docs: { doc: AnyManifest; origin?: string }[], bus: Announcer): Promise<ReconcileResult[]> {
  const order = Object.keys(MANIFEST_KINDS) as ManifestKind[];
  const sorted = [...docs].sort((a, b) => order.indexOf(a.doc.kind) - order.indexOf(b.doc.kind));
  const results: ReconcileResult[] = [];
  for (const { doc, origin } of sorted) results.push(await reconcileManifest(db, doc, bus, origin));
  return results;
}

export interface RemoveResult {
  kind: ManifestKind;
  namespace: string | null;
  name: string;
  action: RemoveAction;
}

/** Whether Hearth cleans up after a deleted document of this kind (else the operator only lets it go). */
export function isRemovable(kind: ManifestKind): boolean {
  return reconcilerOf(kind).remove !== undefined;
}

/**
 * Undoes what a deleted document made: a ServerKey's key is revoked, a GameConfig's rows removed, a
 * GameEnvironment or Project retired (its data kept; a Project with live environments is refused).
 * `absent` when there was nothing left to undo (a second delete is harmless). Throws for a kind
 * that is not removed yet (isRemovable).
 */
export async function removeManifest(db: Queryable, ref: { kind: ManifestKind; namespace?: string; name: string }, bus: Announcer): Promise<RemoveResult> {
  const remove = reconcilerOf(ref.kind).remove;
  if (!remove) throw new Error(`Hearth does not remove ${ref.kind} documents yet`);
  const namespace = namespaceFor(ref.kind, ref.namespace);
  const action = await inTransaction(db, async (trx) => {
    const removed = await remove(trx, { namespace: namespace ?? DEFAULT_NAMESPACE, name: ref.name }, { bus });
    await forgetAppliedManifest(trx, { kind: ref.kind, namespace, name: ref.name });
    return removed;
  });
  return { kind: ref.kind, namespace, name: ref.name, action };
}

/**
 * The names of a cluster-scoped kind's live documents in the database (those its reconciler lists:
 * Plans), or null for a kind whose reconciler cannot list them.
 */
export async function liveManifestNames(db: Queryable, kind: ManifestKind): Promise<string[] | null> {
  const live = reconcilerOf(kind).live;
  return live ? live(db) : null;
}
