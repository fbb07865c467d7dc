/**
 * The player's row held FOR KEY SHARE until the caller's transaction ends, so a deletion (which takes
 * the row FOR UPDATE) waits for what is being added to the player, and a player deleted first is not
 * found. One rule for every area: `hearth_hold_player` (economy/sql/hearth_hold_player.sql),
 * which the money engine's moves run in SQL and this runs for TypeScript.
 */
import type { Tx } from '../db/knex';
import { refuse } from '../errors';
import type { EnvironmentContext } from '../tenancy/environments';

export const HOLD_PLAYER_SQL = 'SELECT display_name FROM hearth_hold_player(?, ?)';

/** The held player's display name, or null when the environment has no such player. */
export async function holdPlayer(trx: Tx, environmentId: number, playerId: string): Promise<{ displayName: string | null } | null> {
  const { rows } = await trx.raw(HOLD_PLAYER_SQL, [environmentId, playerId]);
  return rows.length === 0 ? null : { displayName: (rows[0].display_name as string | null) ?? null };
}

/** holdPlayer for the areas that answer a missing player with not-found. */
export async function holdExistingPlayer(trx: Tx, env: EnvironmentContext, playerId: string): Promise<void> {
  if ((await holdPlayer(trx, env.id, playerId)) === null) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
}
