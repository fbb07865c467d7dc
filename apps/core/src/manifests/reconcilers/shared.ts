/**
 * What every kind's reconciler is and shares. A reconciler translates a document into calls to the
 * domain functions the CLI also calls (tenancy/catalog.ts, auth/server-keys.ts,
 * content/game-config-sync.ts); those write, and announce their changes after the commit. A
 * reconciler writes no row itself.
 */
import type { Queryable } from '../../db/knex';
import { ApiError } from '../../errors';
import type { Announcer } from '../../invalidation';
import { type EnvironmentContext, loadEnvironmentByName } from '../../tenancy/environments';
import { DEFAULT_NAMESPACE, ManifestError } from '../validate';

export type ReconcileAction = 'created' | 'updated' | 'unchanged';
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
  remove?(db: Queryable, ref: { namespace: string; name: string }, ctx: { bus: Announcer }): Promise<RemoveAction>;
}

export function namespaceOf(doc: { metadata: { namespace?: string } }): string {
  return doc.metadata.namespace ?? DEFAULT_NAMESPACE;
}

/**
 * Runs a domain write and names its refusals after the document: an ApiError whose details.field
 * is `plan` becomes a ManifestError on `spec.plan`; one without a field falls on `fieldOtherwise`.
 */
export async function refusalsNamed<T>(label: string, write: () => Promise<T>, fieldOtherwise = 'spec'): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const field = typeof err.details?.field === 'string' ? `spec.${err.details.field}` : fieldOtherwise;
    throw new ManifestError(label, field, err.message, err.code);
  }
}

/** The environment a document's `spec.environment` names in its namespace, or a refusal on that field. */
export async function environmentNamed(db: Queryable, namespace: string, name: string, label: string): Promise<EnvironmentContext> {
  const env = await loadEnvironmentByName(db, namespace, name);
  if (!env) throw new ManifestError(label, 'spec.environment', `names environment "${name}", which does not exist in namespace "${namespace}"`, 'not-found');
  return env;
}
