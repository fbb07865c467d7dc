import type { Knex } from 'knex';
import type { Db, Queryable } from '../db/knex';
import { refuse } from '../errors';
import { isTransaction } from '../db/transaction';
import { CONTENT_CHANGED_CHANNEL, type ContentSources, type WatchedCache, environmentContentCache } from './content-watch';
import { type Announcer, type InvalidationBus, announceAfterCommit } from '../invalidation';
import { type CursorCodec, environmentRowsPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import { AskDigests } from './ask-digests';
import type { Cell, ConfigRow, ConfigTable, ConfigValuesQuery, Flag } from '../shapes/content';
import type { PageRequest } from '../shapes/common';

/** Content versions are counted per environment for all of GameConfig; ETags derive from them. */
export const GAME_CONFIG_CONTENT = 'game-config';

function toConfigRow(row: { key: string; group_name: string | null; type: string; value: Cell }): ConfigRow {
  const v = row.value;
  return {
    key: row.key,
    groupName: row.group_name,
    type: row.type as ConfigRow['type'],
    valueStr: row.type === 'string' && typeof v === 'string' ? v : null,
    valueInt: row.type === 'int' && typeof v === 'number' ? v : null,
    valueFloat: row.type === 'float' && typeof v === 'number' ? v : null,
    valueBool: row.type === 'bool' && typeof v === 'boolean' ? v : null,
    LevelRateConfig: null,
  };
}

function toConfigTable(row: Record<string, unknown>): ConfigTable {
  return {
    key: row.key as string,
    name: row.name as string,
    description: (row.description as string | null) ?? null,
    groupName: (row.group_name as string | null) ?? null,
    columns: row.columns as ConfigTable['columns'],
    rows: row.rows as ConfigTable['rows'],
  };
}

export class GameConfigService {
  private versions: WatchedCache<number>;
  /** What was asked → its digest in ETags (a pure function: never stale). */
  private readonly asks = new AskDigests();

  /** The content-version cache is the process's (ContentSources): the ETag of a conditional read waits for nothing once it is there. */
  constructor(private readonly content: ContentSources) {
    this.versions = environmentContentCache(content.watch, content.bus, 30_000);
  }

  /** The environment's content version: from memory on the hot path while the ContentWatch is live. */
  version(envId: number): Promise<number> {
    return this.versions.get(envId, () => readContentVersion(this.content.pool, envId, GAME_CONFIG_CONTENT));
  }

  /**
   * A strong ETag for one read: the content version plus what was asked (route, query) and where.
   * The environment is part of it: one URL answers each environment its own content, and a client
   * that changes credential must not get a 304 for the other environment's copy.
   */
  async etag(envId: number, request: string): Promise<string> {
    return this.etagAt(await this.version(envId), envId, request);
  }

  /**
   * A conditional read's body and its ETag from one snapshot: the content version and what `read`
   * reads come from one repeatable-read transaction, so the ETag names exactly the body's content
   * however the caches stand.
   */
  async snapshot<T>(db: Queryable, envId: number, request: string, read: (db: Queryable) => Promise<T>): Promise<{ body: T; etag: string }> {
    const both = async (trx: Queryable) => {
      const version = await readContentVersion(trx, envId, GAME_CONFIG_CONTENT);
      return { body: await read(trx), etag: this.etagAt(version, envId, request) };
    };
    // Inside a caller's transaction its snapshot is already the one.
    return isTransaction(db) ? both(db) : db.transaction(both, { isolationLevel: 'repeatable read', readOnly: true });
  }

  private etagAt(version: number, envId: number, request: string): string {
    return this.asks.etag(envId, request, version);
  }

  async listValues(db: Queryable, env: EnvironmentContext, q: ConfigValuesQuery): Promise<Page<ConfigRow>> {
    const { groupName } = q;
    const rows = {
      listId: `config-values|${env.id}|${groupName ?? ''}`,
      table: 'config_values',
      by: 'key',
      narrow: groupName === undefined ? undefined : (query: Knex.QueryBuilder) => void query.where({ group_name: groupName }),
    };
    return environmentRowsPage(this.content.cursors, db, env.id, q, rows, toConfigRow);
  }

  async listTables(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<ConfigTable>> {
    return environmentRowsPage(this.content.cursors, db, env.id, q, { listId: `config-tables|${env.id}`, table: 'config_tables', by: 'key' }, toConfigTable);
  }

  async getTable(db: Queryable, env: EnvironmentContext, key: string): Promise<ConfigTable> {
    const row = await db('config_tables').where({ environment_id: env.id, key }).first();
    if (!row) throw refuse.notFound('The config table', { key, field: 'key' });
    return toConfigTable(row);
  }

  async listFlags(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<Flag>> {
    return environmentRowsPage(this.content.cursors, db, env.id, q, { listId: `flags|${env.id}`, table: 'flags', by: 'name' }, (row) => ({
      name: row.name as string,
      isEnabled: row.enabled as boolean,
    }));
  }
}

/**
 * Bumps the environment's content version inside the writer's transaction, and notifies every
 * process's ContentWatch in the same transaction: PostgreSQL delivers the notification when (and
 * only if) the change commits, so no cache outlives a committed change by more than that delivery.
 */
export async function bumpContentVersion(trx: Queryable, envId: number, kind = GAME_CONFIG_CONTENT): Promise<void> {
  await trx.raw(
    `INSERT INTO content_versions (environment_id, kind, version) VALUES (?, ?, 1)
     ON CONFLICT (environment_id, kind) DO UPDATE SET version = content_versions.version + 1`,
    [envId, kind],
  );
  // The same payload notified twice in one transaction is delivered once.
  await trx.raw('SELECT pg_notify(?, ?)', [CONTENT_CHANGED_CHANNEL, String(envId)]);
}

/** A change of the environment's content of `kind`: its version moves, and every process drops its copy after the commit. */
export async function contentChanged(trx: Queryable, bus: Announcer, environmentId: number, kind = GAME_CONFIG_CONTENT): Promise<void> {
  await bumpContentVersion(trx, environmentId, kind);
  await announceAfterCommit(trx, bus, { kind: 'content', environmentId });
}

/** The environment's content version of `kind` as `db` sees it (0 before the first change). */
export async function readContentVersion(db: Queryable, envId: number, kind: string): Promise<number> {
  const row = await db('content_versions').where({ environment_id: envId, kind }).first('version');
  return row ? Number(row.version) : 0;
}
