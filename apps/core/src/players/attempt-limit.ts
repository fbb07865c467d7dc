/**
 * A player's limit counted in the database instead of Redis (the store identifications, the support
 * filings: they must hold while Redis is down). The player's row is locked FOR NO KEY UPDATE so that
 * one player's attempts take turns, the window is the database clock's (every API process agrees on
 * it), and the attempts in it are the player's rows of a table of attempts since its start.
 */
import type { Tx } from '../db/knex';
import { refuse } from '../errors';
import { type RateOutcome, windowOf } from '../coord/coordination';
import type { EnvironmentContext } from '../tenancy/environments';

export type AttemptStanding = RateOutcome['nearest'];

/** The limit, and where its attempts are kept: `table` has the player in `player_id` and the attempt's time in `at`. */
export interface AttemptLimit {
  name: string;
  limit: number;
  windowSeconds: number;
  attempts: { table: string; at: string };
  /** The refusal past the limit (a RouteLimitReached of the area's). */
  refused: (standing: AttemptStanding) => Error;
}

/**
 * Locks the player's row, runs `checks` (input a refused attempt would not count anyway), and counts
 * this window's attempts: refuses the one past the limit, otherwise answers the standing once this
 * attempt is stored (the caller stores it) and the window's start.
 */
export async function countAttempt(
  trx: Tx,
  env: EnvironmentContext,
  playerId: string,
  limit: AttemptLimit,
  checks?: () => Promise<void>,
): Promise<{ standing: AttemptStanding; windowStart: number }> {
  const player = await trx.raw(
    'SELECT (extract(epoch FROM now()) * 1000)::float8 AS now_ms FROM players WHERE id = ? AND environment_id = ? FOR NO KEY UPDATE',
    [playerId, env.id],
  );
  if (player.rows.length === 0) throw refuse.unauthorized('The player no longer exists.');
  if (checks) await checks();
  const window = windowOf(Number(player.rows[0].now_ms), limit.windowSeconds);
  const { table, at } = limit.attempts;
  const counted = await trx.raw(`SELECT count(*)::int AS n FROM ${table} WHERE player_id = ? AND ${at} >= to_timestamp(?)`, [playerId, window.start]);
  const made = counted.rows[0].n as number;
  const standing = { name: limit.name, limit: limit.limit, remaining: limit.limit - made - 1, resetSeconds: window.resetSeconds };
  if (made >= limit.limit) throw limit.refused({ ...standing, remaining: 0 });
  return { standing, windowStart: window.start };
}
