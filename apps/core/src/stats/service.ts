/**
 * Stats (spec §2 Stat, §4 Stats; docs/progression.md "Stats"): 64-bit signed counters of a player
 * and of the environment, raised or lowered by game servers, each kept per realm; a read without a
 * realm adds up every realm's counter of a key. A stat needs no definition: any key counts from 0.
 *
 * Values leave as decimal strings (JSON numbers lose exactness past 2^53). An increment is one
 * statement (`hearth_stat_increment`, migrations/20261126195700_stats.ts) that refuses a move past the
 * 64-bit range instead of wrapping; the environment's counter is kept in shard rows so that servers
 * adding to one key at once rarely wait on one another (the design is in docs/progression.md).
 */
import type { Queryable } from '../db/knex';
import { preparedStatement, runStatement } from '../db/statement';
import { refuse } from '../errors';
import { engineError } from '../economy/refusals';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { Stat } from '../shapes';

/** How many rows hold one environment counter: increments from many connections spread over them; a read sums them. */
export const STAT_SHARDS = 16;

/** The realm_key of counters an increment named no realm for (realm keys are never empty). */
const NO_REALM = '';

/** An increment: one statement, by itself as its own transaction (or in the route's, under an Idempotency-Key). */
export const STAT_INCREMENT = preparedStatement('hearth_stat_increment', 'SELECT hearth_stat_increment(?, ?, ?, ?, ?, ?) AS value');

/** Whose counters: a player's, or the environment's (null). */
export type StatOwner = { playerId: string } | null;

export class StatService {
  constructor(private readonly cursors: CursorCodec) {}

  /**
   * POST /players/:playerId/stats/:key/increment and POST /stats/:key/increment: adds `by` (a whole
   * number other than 0, either sign, at most 2^53-1 either way) to the counter of `realmId` (null or
   * absent: the one of no realm) and answers the counter's new value. Refused past the 64-bit range.
   */
  async increment(db: Queryable, env: EnvironmentContext, owner: StatOwner, key: string, by = 1, realmId?: string | null): Promise<Stat> {
    if (!Number.isSafeInteger(by) || by === 0) throw refuse.invalid('by', 'by is a whole number other than 0 (at most 2^53-1 either way).');
    try {
      const [row] = await runStatement<{ value: string }>(db, STAT_INCREMENT, [env.id, owner?.playerId ?? null, key, realmId ?? NO_REALM, by.toString(), STAT_SHARDS]);
      return { key, value: row.value };
    } catch (err) {
      throw engineError(err);
    }
  }

  /**
   * GET /players/:playerId/stats and GET /stats: the counters by key (byte order); of one realm when
   * `realmId` names one, else each key's counters of every realm (and of none) added up.
   */
  async list(db: Queryable, env: EnvironmentContext, owner: StatOwner, q: { realmId?: string; limit?: number; cursor?: string }): Promise<Page<Stat>> {
    if (owner) {
      const player = await db('players').where({ id: owner.playerId, environment_id: env.id }).first('id');
      if (!player) throw refuse.notFound('The player');
    }
    if (q.realmId !== undefined) {
      const realm = await db('realms').where({ environment_id: env.id, key: q.realmId }).first('key');
      if (!realm) throw refuse.notFound('The realm');
    }
    return keysetPage(
      this.cursors,
      `stats|${env.id}|${owner?.playerId ?? ''}|${q.realmId ?? ''}`,
      q,
      (after: string | undefined, take) => {
        const query = owner ? db('player_stats').where({ player_id: owner.playerId }) : db('environment_stats').where({ environment_id: env.id });
        if (q.realmId !== undefined) query.where({ realm_key: q.realmId });
        if (after !== undefined) query.where('key', '>', after);
        return query.groupBy('key').orderBy('key').limit(take).select('key', db.raw('sum(value)::text AS value'));
      },
      (row) => row.key as string,
      (row): Stat => ({ key: row.key, value: row.value }),
    );
  }
}
