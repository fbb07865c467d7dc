/**
 * Players' unlocks (spec §2 Unlock, §4 Progression; docs/economy.md "Unlocks"): named keys a game
 * server records for a player (a chapter finished, a mode opened), which item types may require.
 * The first record stands: recording a key again answers the first record (its source and time), and
 * of parallel first records exactly one is the one that recorded it (the primary key decides).
 * Unlocks go with the player (ON DELETE CASCADE).
 */
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { holdExistingPlayer } from '../players/hold';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { PageRequest } from '../shapes/common';

export interface Unlock {
  key: string;
  source: string;
  unlockedAt: string;
}

/** The source recorded when a server names none. */
export const DEFAULT_UNLOCK_SOURCE = 'server';

function unlockOf(row: { key: string; source: string; unlocked_at: Date }): Unlock {
  return { key: row.key, source: row.source, unlockedAt: row.unlocked_at.toISOString() };
}

/** `_` is a wildcard of LIKE and a letter of keys: a prefix matches itself literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class UnlockService {
  constructor(private readonly cursors: CursorCodec) {}

  /** GET /players/:playerId/unlocks: the player's unlocks by key (byte order), optionally those whose key starts with `prefix`. */
  async list(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest & { prefix?: string }): Promise<Page<Unlock>> {
    const player = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!player) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    return keysetPage(
      this.cursors,
      `unlocks|${env.id}|${playerId}|${q.prefix ?? ''}`,
      q,
      (after: string | undefined, take) => {
        const query = db('player_unlocks').where({ player_id: playerId }).orderBy('key').limit(take).select('key', 'source', 'unlocked_at');
        if (q.prefix !== undefined) query.whereRaw("key LIKE ? ESCAPE '\\'", [likePrefix(q.prefix)]);
        if (after !== undefined) query.where('key', '>', after);
        return query;
      },
      (row) => row.key as string,
      unlockOf,
    );
  }

  /**
   * PUT /players/:playerId/unlocks/:key: records the unlock unless the player holds it. `created` is
   * true for the one call that recorded it; every other call answers that first record unchanged.
   */
  async record(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    key: string,
    source = DEFAULT_UNLOCK_SOURCE,
  ): Promise<{ unlock: Unlock; created: boolean }> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      // A parallel insert of the same key waits for the first to commit, then inserts nothing.
      const inserted = await trx('player_unlocks')
        .insert({ player_id: playerId, environment_id: env.id, key, source })
        .onConflict(['player_id', 'key'])
        .ignore()
        .returning(['key', 'source', 'unlocked_at']);
      if (inserted.length > 0) return { unlock: unlockOf(inserted[0]), created: true };
      const first = await trx('player_unlocks').where({ player_id: playerId, key }).first('key', 'source', 'unlocked_at');
      return { unlock: unlockOf(first), created: false };
    });
  }

  /** DELETE /players/:playerId/unlocks/:key: done whether or not the player held it (not-found only for no such player). */
  async remove(db: Queryable, env: EnvironmentContext, playerId: string, key: string): Promise<void> {
    await inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      await trx('player_unlocks').where({ player_id: playerId, key }).delete();
    });
  }
}
