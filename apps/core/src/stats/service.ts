/**
 * Stats (spec §2 Stat, §4 Stats; docs/progression.md "Stats"): 64-bit signed counters of a player
 * and of the environment, raised or lowered by game servers, each kept per realm; a read without a
 * realm adds up every realm's counter of a key. A stat needs no definition: any key counts from 0.
 *
 * Values leave as decimal strings (JSON numbers lose exactness past 2^53). Each counter is one row,
 * and an increment answers the counter's value right after it in one order of all increments of that
 * counter (the row lock's order): no two increments answer the same value, and a read after an answer
 * sees at least that increment. For throughput on a hot counter, the increments of one counter that
 * arrive while a statement for it is in flight on the pool are queued and sent together as ONE
 * statement (`hearth_stat_increments`, migrations/20261202043700_stat_counter_one_row.ts), which
 * applies them in order under one row lock, writes the row once and answers each its own value.
 * A move past the 64-bit range is refused alone, never wrapped (the design is in docs/progression.md).
 */
import type { Knex } from 'knex';
import type { Queryable } from '../db/knex';
import { preparedStatement, runStatement } from '../db/statement';
import { isTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { engineError, refusalOf } from '../economy/refusals';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { Stat } from '../shapes/progression';
import type { StatIncrementRequest, StatListQuery } from '../shapes/stats';

/** The realm_key of counters an increment named no realm for (realm keys are never empty). */
const NO_REALM = '';

/**
 * Increments of one counter: each step applied in order, one row per step (`value` after it, or `held`
 * when the step was refused past the range). By itself as its own transaction on the pool, or in the
 * route's transaction under an Idempotency-Key. The steps are a PostgreSQL array literal (`{1,-3}`).
 */
export const STAT_INCREMENTS = preparedStatement(
  'hearth_stat_increments',
  'SELECT step_value AS value, held FROM hearth_stat_increments(?, ?, ?, ?, ?) ORDER BY step',
);

/** The most steps one statement carries; a longer queue goes in several statements, one after another. */
export const MAX_COMBINED_STEPS = 1000;

/** Whose counters: a player's, or the environment's (null). */
export type StatOwner = { playerId: string } | null;

/** One counter: environment, player (null: the environment's), key, realm key. */
type Counter = readonly [environmentId: number, playerId: string | null, key: string, realmKey: string];

/** What an increment of the counter was asked, by the API's names, for a refusal to name what it did not find. */
const counterInput = ([, playerId, , realmKey]: Counter) => ({ playerId: playerId ?? undefined, realmId: realmKey === NO_REALM ? undefined : realmKey });

/** One increment waiting in its counter's queue for the statement that carries it. */
interface Waiting {
  by: number;
  resolve(value: string): void;
  reject(err: unknown): void;
}

/** What the statement answers per step. */
interface StepRow {
  value: string | null;
  held: string | null;
}

/** The answer of one step: its value, or the refusal of a step past the range. */
function valueOf(row: StepRow, by: number): string {
  if (row.value !== null) return row.value;
  throw refusalOf({ outcome: 'stat-out-of-range', held: row.held, requested: by.toString() });
}

/** Runs the steps on one counter (one statement) and answers its rows, one per step in order. */
async function runSteps(db: Queryable, counter: Counter, steps: number[]): Promise<StepRow[]> {
  const rows = await runStatement<StepRow>(db, STAT_INCREMENTS, [...counter, `{${steps.join(',')}}`]);
  if (rows.length !== steps.length) throw new Error(`hearth_stat_increments answered ${rows.length} rows for ${steps.length} steps`);
  return rows;
}

export class StatService {
  /**
   * Per pool, the counters with a statement in flight, each with the increments that arrived since
   * (sent by the next statement when the one in flight is answered). A counter is here exactly while
   * its statements run; an increment of a counter not here is sent at once.
   */
  private readonly queues = new WeakMap<Knex, Map<string, Waiting[]>>();

  constructor(private readonly cursors: CursorCodec) {}

  /**
   * POST /players/:playerId/stats/:key/increment and POST /stats/:key/increment: adds `by` (a whole
   * number other than 0, either sign, at most 2^53-1 either way) to the counter of `realmId` (null or
   * absent: the one of no realm) and answers the counter's new value. Refused past the 64-bit range.
   * On the pool, combined with the increments of the same counter that arrive meanwhile; in a
   * transaction (an Idempotency-Key's), one statement of its own there.
   */
  async increment(db: Queryable, env: EnvironmentContext, owner: StatOwner, key: string, { by = 1, realmId }: StatIncrementRequest = {}): Promise<Stat> {
    if (!Number.isSafeInteger(by) || by === 0) throw refuse.invalid('by', 'by is a whole number other than 0 (at most 2^53-1 either way).');
    const counter: Counter = [env.id, owner?.playerId ?? null, key, realmId ?? NO_REALM];
    if (isTransaction(db)) {
      let rows: StepRow[];
      try {
        rows = await runSteps(db, counter, [by]);
      } catch (err) {
        throw engineError(err, counterInput(counter));
      }
      return { key, value: valueOf(rows[0], by) };
    }
    return { key, value: await this.combined(db as Knex, counter, by) };
  }

  /** The step sent at once when its counter has no statement in flight, else queued for the next. */
  private combined(pool: Knex, counter: Counter, by: number): Promise<string> {
    let inFlight = this.queues.get(pool);
    if (!inFlight) this.queues.set(pool, (inFlight = new Map()));
    // Keys, player ids and realm keys hold no NUL.
    const id = `${counter[0]}\u0000${counter[1] ?? ''}\u0000${counter[2]}\u0000${counter[3]}`;
    return new Promise<string>((resolve, reject) => {
      const waiting: Waiting = { by, resolve, reject };
      const queue = inFlight.get(id);
      if (queue) {
        queue.push(waiting);
        return;
      }
      const fresh = [waiting];
      inFlight.set(id, fresh);
      void this.drain(pool, inFlight, id, counter, fresh);
    });
  }

  /**
   * Sends the counter's queue, one statement at a time, until nothing waits: each increment is
   * answered its own step's value or refusal. A statement that fails as a whole (a refusal of the
   * counter: its realm or player unknown; or a fault: the connection lost) fails every increment it
   * carried, and none of them is sent again.
   */
  private async drain(pool: Knex, inFlight: Map<string, Waiting[]>, id: string, counter: Counter, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_COMBINED_STEPS);
      let rows: StepRow[];
      try {
        rows = await runSteps(
          pool,
          counter,
          batch.map((w) => w.by),
        );
      } catch (err) {
        for (const w of batch) w.reject(engineError(err, counterInput(counter)));
        continue;
      }
      batch.forEach((w, i) => {
        try {
          w.resolve(valueOf(rows[i], w.by));
        } catch (refusal) {
          w.reject(refusal);
        }
      });
    }
    // Nothing waits and nothing is in flight: the next increment of this counter is sent at once.
    inFlight.delete(id);
  }

  /**
   * GET /players/:playerId/stats and GET /stats: the counters by key (byte order); of one realm when
   * `realmId` names one, else each key's counters of every realm (and of none) added up.
   */
  async list(db: Queryable, env: EnvironmentContext, owner: StatOwner, q: StatListQuery): Promise<Page<Stat>> {
    if (owner) {
      const player = await db('players').where({ id: owner.playerId, environment_id: env.id }).first('id');
      if (!player) throw refuse.notFound('The player', { key: owner.playerId, field: 'playerId' });
    }
    if (q.realmId !== undefined) {
      const realm = await db('realms').where({ environment_id: env.id, key: q.realmId }).first('key');
      if (!realm) throw refuse.notFound('The realm', { key: q.realmId, field: 'realmId' });
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
