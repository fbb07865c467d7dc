/**
 * Writing GameConfig content: the values, tables and flags one owner (a GameConfig document,
 * `namespace/name`) lists in one environment. Called by the GameConfig reconciler (`hearth apply`,
 * the operator). Each function takes its database from the caller, runs in one transaction (the
 * caller's when there is one), bumps the content version of every environment it changed (so ETags
 * change) and announces `content` for each after the commit, so every process drops its cached
 * version at once. Reads live in game-config.ts.
 *
 * Refusals are Refusal errors whose `details.field` names the offending field of the content
 * (`flags.1.name`) and whose message reads after that field's name (`"shop" is listed twice`).
 */
import { sameJson } from '../canonical-json';
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { Announcer } from '../invalidation';
import type { GameConfigSpecT } from '../contract/resources';
import { GAME_CONFIG_CONTENT, contentChanged } from './game-config';
import { type OwnerPlace, type SyncAction, lockContentWriter, releaseContent } from './owned-row';

/** What a GameConfig lists: its spec without the environment it is in. */
export type GameConfigContent = Omit<GameConfigSpecT, 'environment'>;

/** The three tables a GameConfig's rows live in, each keyed by one column within an environment. */
const CONTENT_TABLES = {
  values: { name: 'config_values', keyColumn: 'key', jsonColumns: ['value'] },
  tables: { name: 'config_tables', keyColumn: 'key', jsonColumns: ['columns', 'rows'] },
  flags: { name: 'flags', keyColumn: 'name', jsonColumns: [] },
} as const;
type ContentList = keyof typeof CONTENT_TABLES;

/**
 * Makes the rows `owner` has in the environment exactly `content` (removing what it no longer lists),
 * and takes its rows out of any other environment (a document moved). A key owned by another owner
 * is refused. The content version moves only when something changed; `created` means the owner had
 * no rows anywhere before (a GameConfig exists only through the rows it owns).
 */
export async function syncGameConfig(db: Queryable, bus: Announcer, target: OwnerPlace & { content: GameConfigContent }): Promise<SyncAction> {
  const { environmentId, owner, content } = target;
  const rows = rowsOf(content, owner);
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    const synced = [];
    for (const list of Object.keys(CONTENT_TABLES) as ContentList[]) {
      synced.push(await syncOwned(trx, list, environmentId, owner, rows[list]));
    }
    const left = await deleteOwnedRows(trx, owner, environmentId);
    const changed = synced.some((s) => s.changed);
    if (!changed && left.length === 0) return 'unchanged';
    for (const id of left) await contentChanged(trx, bus, id);
    if (changed) await contentChanged(trx, bus, environmentId);
    return left.length > 0 || synced.some((s) => s.ownedBefore) ? 'updated' : 'created';
  });
}

/** Removes every row `owner` has, in every environment (its document was deleted); answers whether it had any. */
export async function releaseGameConfig(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, GAME_CONFIG_CONTENT, (trx) => deleteOwnedRows(trx, owner));
}

/** The content as rows of its three tables, checked: cells of their column's type, no key listed twice. */
function rowsOf(content: GameConfigContent, owner: string): Record<ContentList, Record<string, unknown>[]> {
  const values = (content.values ?? []).map((v, i) => {
    checkCell(v.type, v.value, `values.${i}.value`);
    return { key: v.key, owner, group_name: v.groupName ?? null, type: v.type, value: v.value };
  });
  const tables = (content.tables ?? []).map((t, i) => {
    const columns = new Map(t.columns.map((c) => [c.key, c.type]));
    t.rows.forEach((r, j) =>
      Object.entries(r.cells).forEach(([col, cell]) => {
        const field = `tables.${i}.rows.${j}.cells.${col}`;
        const type = columns.get(col);
        if (!type) throw refuse.invalid(field, `is not a column of table "${t.key}"`);
        checkCell(type, cell, field);
      }),
    );
    return {
      key: t.key,
      owner,
      name: t.name,
      description: t.description ?? null,
      group_name: t.groupName ?? null,
      columns: t.columns,
      rows: t.rows.map((r, j) => ({ key: r.key, sortOrder: j, cells: r.cells })),
    };
  });
  const flags = (content.flags ?? []).map((f) => ({ name: f.name, owner, enabled: f.enabled }));
  const rows = { values, tables, flags };
  for (const list of Object.keys(CONTENT_TABLES) as ContentList[]) checkUnique(list, rows[list]);
  return rows;
}

function checkCell(type: string, value: unknown, field: string): void {
  if (value === null) return;
  const ok =
    (type === 'string' && typeof value === 'string') ||
    (type === 'int' && Number.isInteger(value)) ||
    (type === 'float' && typeof value === 'number') ||
    (type === 'bool' && typeof value === 'boolean');
  if (!ok) throw refuse.invalid(field, `must be of type ${type}`);
}

function checkUnique(list: ContentList, rows: Record<string, unknown>[]): void {
  const { keyColumn } = CONTENT_TABLES[list];
  const seen = new Set<unknown>();
  rows.forEach((row, i) => {
    const key = row[keyColumn];
    if (seen.has(key)) throw refuse.invalid(`${list}.${i}.${keyColumn}`, `"${key}" is listed twice`);
    seen.add(key);
  });
}

/** Deletes the owner's rows outside `keepEnvironmentId` (all of them without it); answers the environments they were in. */
async function deleteOwnedRows(trx: Tx, owner: string, keepEnvironmentId?: number): Promise<number[]> {
  const left = new Set<number>();
  for (const { name } of Object.values(CONTENT_TABLES)) {
    const query = trx(name).where({ owner });
    if (keepEnvironmentId !== undefined) query.whereNot({ environment_id: keepEnvironmentId });
    const rows: { environment_id: string }[] = await query.delete().returning('environment_id');
    rows.forEach((r) => left.add(Number(r.environment_id)));
  }
  return [...left];
}

/** Makes this owner's rows in one table exactly `rows`; answers whether anything changed and whether it owned any before. */
async function syncOwned(
  trx: Tx,
  list: ContentList,
  environmentId: number,
  owner: string,
  rows: Record<string, unknown>[],
): Promise<{ changed: boolean; ownedBefore: boolean }> {
  const { name, keyColumn, jsonColumns } = CONTENT_TABLES[list];
  const current: Record<string, unknown>[] = await trx(name).where({ environment_id: environmentId });
  const byKey = new Map(current.map((r) => [r[keyColumn] as string, r]));
  const fields = rows.length > 0 ? Object.keys(rows[0]) : [];
  let changed = false;
  for (const [i, row] of rows.entries()) {
    const existing = byKey.get(row[keyColumn] as string);
    if (existing && existing.owner !== owner) {
      throw refuse.conflict(`"${row[keyColumn]}" already belongs to GameConfig ${existing.owner}`, { field: `${list}.${i}.${keyColumn}` });
    }
    if (existing && fields.every((f) => sameJson(existing[f] ?? null, row[f] ?? null))) continue;
    const stored: Record<string, unknown> = { ...row, environment_id: environmentId };
    for (const c of jsonColumns) stored[c] = JSON.stringify(row[c]);
    await trx(name).insert(stored).onConflict(['environment_id', keyColumn]).merge();
    changed = true;
  }
  const wanted = new Set(rows.map((r) => r[keyColumn] as string));
  const stale = current.filter((r) => r.owner === owner && !wanted.has(r[keyColumn] as string)).map((r) => r[keyColumn] as string);
  if (stale.length > 0) {
    await trx(name).where({ environment_id: environmentId }).whereIn(keyColumn, stale).delete();
    changed = true;
  }
  return { changed, ownedBefore: current.some((r) => r.owner === owner) };
}
