/**
 * Tours (spec §2 Tour; §3 tour completion; §4 Tours): per-player completion flags of the
 * environment's tours. Tours are content written by Tour manifests (syncTour, called by the
 * reconciler). Only switched-on tours are listed, and only they can be completed: a switched-off
 * tour answers `not-found` like one that does not exist (what a player cannot see is not there for
 * them); a completion made before it was switched off is kept and shows again when it comes back.
 */
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { holdExistingPlayer } from '../players/hold';
import type { Resource, TourSpecT } from '../contract/resources';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import { type OwnedRowTable, type OwnerPlace, type SyncAction, releaseOwnedRow, syncOwnedRow } from '../content/owned-row';
import type { PageRequest } from '../shapes/common';
import type { Tour } from '../shapes/tours';

/** What a Tour manifest writes: the id resolved, `enabled` defaulted. */
export interface TourContent {
  id: string;
  name: string;
  enabled: boolean;
}

const TOURS: OwnedRowTable = { name: 'tours', keyColumn: 'id', keyField: 'id', kind: 'Tour' };

export function tourContent(doc: Resource<TourSpecT>): TourContent {
  return { id: doc.spec.id ?? doc.metadata.name, name: doc.spec.name, enabled: doc.spec.enabled };
}

/**
 * Makes the owner's tour exactly `content`. Nothing is cached from tours (every read is one indexed
 * query), so there is nothing to announce.
 */
export async function syncTour(db: Queryable, target: OwnerPlace & { content: TourContent }): Promise<SyncAction> {
  const { environmentId, owner, content } = target;
  return inTransaction(db, async (trx) => (await syncOwnedRow(trx, TOURS, { environment_id: environmentId, owner, ...content })).action);
}

/** Removes the owner's tour (its manifest was deleted); players' completions of it stay, harmlessly. */
export async function releaseTour(db: Queryable, owner: string): Promise<boolean> {
  return inTransaction(db, async (trx) => (await releaseOwnedRow(trx, TOURS, owner)) !== null);
}

export class TourService {
  constructor(private readonly cursors: CursorCodec) {}

  /** GET /players/:playerId/tours: the switched-on tours by name (then id, names need not be unique), with the player's completion. */
  async list(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest): Promise<Page<Tour>> {
    return keysetPage(
      this.cursors,
      `tours|${env.id}|${playerId}`,
      q,
      (after: [string, string] | undefined, take) => {
        const query = db('tours as t')
          .leftJoin('tour_completions as c', (on) =>
            on
              .on('c.player_id', db.raw('?', [playerId]))
              .andOn('c.tour_id', 't.id')
              .andOn('c.environment_id', 't.environment_id'),
          )
          .where({ 't.environment_id': env.id, 't.enabled': true })
          .orderBy([{ column: 't.name' }, { column: 't.id' }])
          .limit(take)
          .select('t.id', 't.name', 'c.completed_at');
        if (after !== undefined) query.whereRaw('(t.name, t.id) > (?, ?)', after);
        return query;
      },
      (row: Record<string, unknown>): [string, string] => [row.name as string, row.id as string],
      (row: Record<string, unknown>) => {
        const completedAt = row.completed_at as Date | null;
        return { id: row.id as string, name: row.name as string, completed: completedAt !== null, completedAt: completedAt ? completedAt.toISOString() : null };
      },
    );
  }

  /** POST /players/:playerId/tours/:tourId/complete: done once; repeating it keeps the first completedAt. */
  async complete(db: Queryable, env: EnvironmentContext, playerId: string, tourId: string): Promise<void> {
    await inTransaction(db, async (trx) => {
      // The player's row stays while we add to what they hold (deletion takes it FOR UPDATE).
      await holdExistingPlayer(trx, env, playerId);
      const tour = await trx('tours').where({ environment_id: env.id, id: tourId, enabled: true }).first('id');
      if (!tour) throw refuse.notFound('The tour', { key: tourId, field: 'tourId' });
      await trx('tour_completions').insert({ player_id: playerId, environment_id: env.id, tour_id: tourId }).onConflict(['player_id', 'tour_id']).ignore();
    });
  }
}
