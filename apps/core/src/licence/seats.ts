import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal, refuse } from '../errors';
import type { Organisation } from '../tenancy/organisations';
import type { LicenceActivation, LicenceSeat, LicenceStanding } from '../shapes/licence';

/** A machine's seat, with how many of the licence's seats are taken: the standing before its token. */
export type SeatStanding = Pick<LicenceStanding, 'seat' | 'seats'>;

function seatOf(row: Record<string, unknown>): LicenceSeat {
  return {
    machineId: row.machine_id as string,
    product: row.product as string,
    version: row.version as string,
    activatedAt: new Date(row.activated_at as string).toISOString(),
    checkedAt: new Date(row.checked_at as string).toISOString(),
  };
}

/**
 * The seats of organisations' licences (docs/licence.md), money-like state: a seat is taken under the
 * project's row lock, so racing activations never take more than the plan's `licenceSeats`, and the
 * same machine again is the seat it holds. The licence routes (through LicenceService, which adds the
 * token) and `hearth licence seats|release` use these same rules.
 */
export class LicenceSeats {
  /**
   * Takes a seat for the machine, or answers the one it holds (its product and version brought up to
   * date). Past the plan's seats: quota-exceeded, and nothing changes.
   */
  async take(db: Queryable, organisation: Organisation, machine: LicenceActivation): Promise<SeatStanding> {
    return inTransaction(db, async (trx) => {
      await trx.raw('SELECT id FROM projects WHERE id = ? FOR NO KEY UPDATE', [organisation.id]);
      const limit = await this.limitOf(trx, organisation);
      const mine = { project_id: organisation.id, machine_id: machine.machineId };
      let [row] = await trx('licence_seats')
        .where(mine)
        .update({ product: machine.product, version: machine.version, checked_at: trx.fn.now() })
        .returning('*');
      if (!row) {
        const used = await this.used(trx, organisation);
        if (used >= limit) {
          throw refuse.quota(
            'licenceSeats',
            limit,
            `Every seat of this licence is taken (${used} of ${limit}); release one before activating another machine.`,
          );
        }
        [row] = await trx('licence_seats')
          .insert({ ...mine, product: machine.product, version: machine.version })
          .returning('*');
      }
      return { seat: seatOf(row), seats: { used: await this.used(trx, organisation), limit } };
    });
  }

  /** The machine's seat, noting the check; not-found when it holds none. */
  async check(db: Queryable, organisation: Organisation, machineId: string): Promise<SeatStanding> {
    return inTransaction(db, async (trx) => {
      const [row] = await trx('licence_seats')
        .where({ project_id: organisation.id, machine_id: machineId })
        .update({ checked_at: trx.fn.now() })
        .returning('*');
      if (!row) throw new Refusal('not-found', `The machine "${machineId}" holds no seat of this licence; activate it first.`, { field: 'machineId' });
      return { seat: seatOf(row), seats: { used: await this.used(trx, organisation), limit: await this.limitOf(trx, organisation) } };
    });
  }

  /** Frees the machine's seat; whether it held one (releasing twice changes nothing). */
  async release(db: Queryable, organisation: Organisation, machineId: string): Promise<boolean> {
    return (await db('licence_seats').where({ project_id: organisation.id, machine_id: machineId }).delete()) > 0;
  }

  /** Every seat of the organisation, oldest first, and its plan's seats. */
  async list(db: Queryable, organisation: Organisation): Promise<{ seats: LicenceSeat[]; limit: number }> {
    const rows = await db('licence_seats')
      .where({ project_id: organisation.id })
      .orderBy([{ column: 'activated_at' }, { column: 'machine_id' }]);
    return { seats: rows.map(seatOf), limit: await this.limitOf(db, organisation) };
  }

  private async limitOf(db: Queryable, organisation: Organisation): Promise<number> {
    const row = await db('projects as p')
      .join('plans as pl', 'pl.name', 'p.plan_name')
      .where('p.id', organisation.id)
      .first(db.raw(`(pl.spec->>'licenceSeats')::int AS seats`));
    return Number(row?.seats ?? 0);
  }

  private async used(db: Queryable, organisation: Organisation): Promise<number> {
    const [{ count }] = await db('licence_seats').where({ project_id: organisation.id }).count({ count: '*' });
    return Number(count);
  }
}
