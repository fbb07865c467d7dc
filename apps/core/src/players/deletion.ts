import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { releaseSavesOfDeletedPlayer } from '../saves/service';
import type { EnvironmentContext } from '../tenancy/environments';
import type { PlayerService } from './service';

/**
 * What the sessions area does when a player is deleted (sessions/service.ts): said here, where the
 * deletion needs it, so that players, which sessions builds on, imports nothing of sessions.
 */
export interface SeatsOfDeletedPlayer {
  endSeatsOfDeletedPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void>;
}

/** The services whose holdings end with a player (HearthCore has them all). */
export interface PlayerHoldings {
  players: PlayerService;
  sessions: SeatsOfDeletedPlayer;
}

/**
 * Deletes a player and everything they hold, in one transaction (the caller's, when `db` is one):
 * either all of it goes or none of it does. The database's cascade removes rows nothing else needs to
 * hear about; what must end with more than a cascade (an event, a ledger entry, a counter) is a step
 * below, each queuing its announcements with `afterCommit`, so none go out for a rolled-back deletion.
 *
 * Locks, in the one order every area takes them: the environment (its player count), then the player's
 * row (taken by the first step that needs it, which stops new holdings meanwhile), then what they hold.
 */
export async function deletePlayer(db: Queryable, areas: PlayerHoldings, env: EnvironmentContext, playerId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [env.id]);

    // What the player holds, area by area. A new area adds its step here (saves, tours, legal
    // acceptances, economy: a step ending their holdings with their own events or ledger entries).
    await areas.sessions.endSeatsOfDeletedPlayer(trx, env, playerId);
    await releaseSavesOfDeletedPlayer(trx, env, playerId);

    // The player (identities and the rest cascade) and the environment's count of players.
    const deleted = await trx('players').where({ id: playerId, environment_id: env.id }).delete();
    if (deleted === 0) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    await trx('environments').where({ id: env.id }).decrement('player_count', deleted);
    await areas.players.announceAfterCommit(trx, playerId, 'deleted');
  });
}
