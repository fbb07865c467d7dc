/**
 * Players' XP (spec §2 XP entry, §4 Progression; docs/progression.md "XP"): a total per track, only
 * ever raised, by a game server. A total is a figure like a balance: never past 2^53-1, so every JSON
 * reader keeps it exactly; an amount that would pass it is refused and adds nothing.
 *
 * POST /players/:playerId/xp takes an Idempotency-Key: the route's transaction keeps the key's record
 * with the total this call answered (the pipeline's runIdempotent), so a retry answers the first
 * total and adds nothing again.
 */
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { holdExistingPlayer } from '../players/hold';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import { MAX_BALANCE } from '../contract/game-keys';
import type { EnvironmentContext } from '../tenancy/environments';
import type { XpEntry } from '../shapes';
import type { PageRequest } from '../shapes/common';

/** The track of an amount that names none. */
export const DEFAULT_XP_TRACK = 'default';

export class XpService {
  constructor(private readonly cursors: CursorCodec) {}

  /** GET /players/:playerId/xp: the player's tracks by name (byte order), each with its total. */
  async list(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest): Promise<Page<XpEntry>> {
    const player = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!player) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    return keysetPage(
      this.cursors,
      `xp|${env.id}|${playerId}`,
      q,
      (after: string | undefined, take) => {
        const query = db('player_xp').where({ player_id: playerId }).orderBy('track').limit(take).select('track', 'xp');
        if (after !== undefined) query.where('track', '>', after);
        return query;
      },
      (row) => row.track as string,
      (row): XpEntry => ({ track: row.track, xp: Number(row.xp) }),
    );
  }

  /** POST /players/:playerId/xp: adds `amount` to the track (made at 0 when new) and answers its new total. */
  async add(db: Queryable, env: EnvironmentContext, playerId: string, amount: number, track = DEFAULT_XP_TRACK): Promise<XpEntry> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      // Under the row's lock: an amount that would pass the most a total holds updates nothing.
      const rows: { xp: string }[] = await trx
        .raw(
          `INSERT INTO player_xp AS x (player_id, environment_id, track, xp) VALUES (?, ?, ?, ?)
           ON CONFLICT (player_id, track) DO UPDATE SET xp = x.xp + EXCLUDED.xp WHERE x.xp + EXCLUDED.xp <= ?
           RETURNING x.xp`,
          [playerId, env.id, track, amount, MAX_BALANCE],
        )
        .then((r: { rows: { xp: string }[] }) => r.rows);
      if (rows.length === 0) {
        const held = await trx('player_xp').where({ player_id: playerId, track }).first('xp');
        throw refuse.invalid('amount', `Track ${track} holds ${held?.xp} XP: ${amount} more would pass the most a total holds (${MAX_BALANCE}).`);
      }
      return { track, xp: Number(rows[0].xp) };
    });
  }
}
