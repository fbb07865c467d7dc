/**
 * Content one manifest document stands for as one row (a LegalDocument, a Tour): the row carries its
 * owner (`namespace/name` of the document) and is keyed by (environment, key). Reconciling makes the
 * owner's row exactly the document's; a key taken by another owner is refused; a document moved to
 * another environment or key leaves no row behind.
 */
import { sameJson } from '../canonical-json';
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { Announcer } from '../invalidation';
import { contentChanged } from './game-config';

/** What syncing a document's content did. */
export type SyncAction = 'created' | 'updated' | 'unchanged';

/** Where a document's content goes: the environment its spec names, its rows marked with its owner (`namespace/name`). */
export interface OwnerPlace {
  environmentId: number;
  owner: string;
}

/** One content writer per environment at a time: two owners claiming one key cannot both see it free. */
export async function lockContentWriter(trx: Tx, environmentId: number): Promise<void> {
  await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [environmentId]);
}

export interface OwnedRowTable {
  name: string;
  keyColumn: string;
  /** The document field that names the key, for refusals (`document`, `id`). */
  keyField: string;
  /** How the kind is named in refusals (`LegalDocument`). */
  kind: string;
  /** jsonb columns: given as values (compared as JSON), written as JSON text (the driver would write an array as a PostgreSQL array). */
  jsonColumns?: readonly string[];
}

export interface OwnedRowOutcome {
  action: SyncAction;
  /** Every environment whose rows changed (one the row left, the one it is in). */
  changedEnvironments: number[];
}

export async function syncOwnedRow(
  trx: Tx,
  table: OwnedRowTable,
  row: Record<string, unknown> & { environment_id: number; owner: string },
): Promise<OwnedRowOutcome> {
  const key = row[table.keyColumn] as string;
  await lockContentWriter(trx, row.environment_id);
  await refuseKeyOfAnother(trx, table, row.environment_id, key, row.owner);
  const previous = await trx(table.name).where({ owner: row.owner }).first();
  if (
    previous &&
    Number(previous.environment_id) === row.environment_id &&
    Object.keys(row).every((f) => f === 'environment_id' || sameJson(previous[f] ?? null, row[f] ?? null))
  ) {
    return { action: 'unchanged', changedEnvironments: [] };
  }
  const changed = new Set<number>([row.environment_id]);
  if (previous) {
    await trx(table.name).where({ owner: row.owner }).delete();
    changed.add(Number(previous.environment_id));
  }
  const stored = { ...row };
  for (const column of table.jsonColumns ?? []) stored[column] = JSON.stringify(row[column]);
  await trx(table.name).insert(stored);
  return { action: previous ? 'updated' : 'created', changedEnvironments: [...changed] };
}

/** Refuses a key that another owner's row holds in the environment (`conflict` on the key's field). */
export async function refuseKeyOfAnother(
  trx: Tx,
  table: Pick<OwnedRowTable, 'name' | 'keyColumn' | 'keyField' | 'kind'>,
  environmentId: number,
  key: string,
  owner: string,
): Promise<void> {
  const taken = await trx(table.name)
    .where({ environment_id: environmentId, [table.keyColumn]: key })
    .first('owner');
  if (taken && taken.owner !== owner) throw refuse.conflict(`"${key}" already belongs to ${table.kind} ${taken.owner}`, { field: table.keyField });
}

/** Deletes the owner's row; answers the environment it was in, or null when there was none. */
export async function releaseOwnedRow(trx: Tx, table: OwnedRowTable, owner: string): Promise<number | null> {
  return (await releaseOwnedRows(trx, table.name, owner))[0] ?? null;
}

/** Deletes every row the owner has in `table`; answers the environments they were in. */
export async function releaseOwnedRows(trx: Tx, table: string, owner: string): Promise<number[]> {
  const gone: { environment_id: string }[] = await trx(table).where({ owner }).delete().returning('environment_id');
  return [...new Set(gone.map((row) => Number(row.environment_id)))];
}

/**
 * Takes away what `owner` declared (its document was deleted): `remove` deletes it and answers the
 * environments it was in, whose content version of `kind` then moves (announced after the commit).
 * Answers whether there was anything.
 */
export async function releaseContent(db: Queryable, bus: Announcer, kind: string, remove: (trx: Tx) => Promise<number[]>): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const left = await remove(trx);
    for (const environmentId of left) await contentChanged(trx, bus, environmentId, kind);
    return left.length > 0;
  });
}
