/**
 * Content one manifest document stands for as one row (a LegalDocument, a Tour): the row carries its
 * owner (`namespace/name` of the document) and is keyed by (environment, key). Reconciling makes the
 * owner's row exactly the document's; a key taken by another owner is refused; a document moved to
 * another environment or key leaves no row behind.
 */
import { sameJson } from '../canonical-json';
import type { Tx } from '../db/knex';
import { refuse } from '../errors';

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
  action: 'created' | 'updated' | 'unchanged';
  /** Every environment whose rows changed (one the row left, the one it is in). */
  changedEnvironments: number[];
}

export async function syncOwnedRow(trx: Tx, table: OwnedRowTable, row: Record<string, unknown> & { environment_id: number; owner: string }): Promise<OwnedRowOutcome> {
  const key = row[table.keyColumn] as string;
  // One content writer per environment at a time: two owners claiming one key cannot both see it free.
  await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [row.environment_id]);
  const taken = await trx(table.name).where({ environment_id: row.environment_id, [table.keyColumn]: key }).first();
  if (taken && taken.owner !== row.owner) {
    throw refuse.conflict(`"${key}" already belongs to ${table.kind} ${taken.owner}`, { field: table.keyField });
  }
  const previous = await trx(table.name).where({ owner: row.owner }).first();
  if (previous && Number(previous.environment_id) === row.environment_id && Object.keys(row).every((f) => f === 'environment_id' || sameJson(previous[f] ?? null, row[f] ?? null))) {
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

/** Deletes the owner's row; answers the environment it was in, or null when there was none. */
export async function releaseOwnedRow(trx: Tx, table: OwnedRowTable, owner: string): Promise<number | null> {
  const gone: { environment_id: string }[] = await trx(table.name).where({ owner }).delete().returning('environment_id');
  return gone.length > 0 ? Number(gone[0].environment_id) : null;
}
