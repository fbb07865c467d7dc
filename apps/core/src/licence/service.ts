import type { Db, Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { ApiError, refuse } from '../errors';
import type { InvalidationBus } from '../invalidation';
import { HashedKeyVerifier } from '../auth/hashed-keys';
import type { LicenceKeyAuthority, LicencePrincipal } from '../auth/authenticate';
import type { PublicJwk } from '../auth/signing-keys';
import { type Organisation, organisationById } from '../tenancy/organisations';
import type { LicenceSeat, LicenceStanding } from '../shapes/licence';
import { LICENCE_KEYS, looksLikeLicenceKey } from './keys';
import { LicenceTokenService } from './tokens';

/** What a plugin says of the machine it runs on when it activates. */
export interface MachineActivation {
  machineId: string;
  product: string;
  version: string;
}

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
 * The licence of an organisation for its client plugins (docs/licence.md): its keys as credentials,
 * its plan's `licenceSeats` taken by machines, and the licence tokens a plugin checks offline.
 * Seats are counted under the project's row lock, so racing activations never take more than the plan
 * gives; the same machine again is the seat it holds.
 */
export class LicenceService implements LicenceKeyAuthority {
  readonly tokens: LicenceTokenService;
  private readonly keys: HashedKeyVerifier;

  /** `pool` loads what every request of the process shares (the key cache, the signing keys). */
  constructor(private readonly pool: Db, masterKey: Buffer, bus: InvalidationBus) {
    this.tokens = new LicenceTokenService(pool, masterKey, bus);
    this.keys = new HashedKeyVerifier(LICENCE_KEYS, pool, bus);
  }

  start(): Promise<void> {
    return this.tokens.start();
  }

  stop(): void {
    this.tokens.stop();
  }

  claims(credential: string): boolean {
    return looksLikeLicenceKey(credential);
  }

  /** The organisation a licence key is of, or null for a malformed, unknown or revoked key or a retired project. */
  async authenticate(credential: string): Promise<LicencePrincipal | null> {
    const key = await this.keys.verify(credential);
    if (!key) return null;
    const organisation = await organisationById(this.pool, key.ownerId);
    return organisation && { kind: 'licence', keyId: key.keyId, organisation };
  }

  /** The public keys that verify licence tokens (GET /licence/jwks.json). */
  jwks(): { keys: PublicJwk[] } {
    return this.tokens.jwks();
  }

  /**
   * Takes a seat for the machine, or answers the one it holds (its product and version brought up to
   * date). Past the plan's seats: quota-exceeded, and nothing changes.
   */
  async activate(db: Queryable, organisation: Organisation, machine: MachineActivation): Promise<LicenceStanding> {
    return inTransaction(db, async (trx) => {
      const limit = await this.lockSeats(trx, organisation);
      const mine = { project_id: organisation.id, machine_id: machine.machineId };
      let [row] = await trx('licence_seats').where(mine).update({ product: machine.product, version: machine.version, checked_at: trx.fn.now() }).returning('*');
      if (!row) {
        const used = await this.seatsUsed(trx, organisation);
        if (used >= limit) {
          throw refuse.quota('licenceSeats', limit, `Every seat of this licence is taken (${used} of ${limit}); release one before activating another machine.`);
        }
        [row] = await trx('licence_seats').insert({ ...mine, product: machine.product, version: machine.version }).returning('*');
      }
      return this.standing(trx, organisation, row, limit);
    });
  }

  /** Whether the machine holds a seat (not-found when it does not), with a fresh token. */
  async check(db: Queryable, organisation: Organisation, machineId: string): Promise<LicenceStanding> {
    return inTransaction(db, async (trx) => {
      const [row] = await trx('licence_seats').where({ project_id: organisation.id, machine_id: machineId }).update({ checked_at: trx.fn.now() }).returning('*');
      if (!row) throw new ApiError('not-found', 'This machine holds no seat of this licence; activate it first.');
      return this.standing(trx, organisation, row, await this.seatLimit(trx, organisation));
    });
  }

  /** Frees the machine's seat; a machine that holds none is fine (releasing twice changes nothing). */
  async release(db: Queryable, organisation: Organisation, machineId: string): Promise<void> {
    await db('licence_seats').where({ project_id: organisation.id, machine_id: machineId }).delete();
  }

  /** The seats of an organisation, for its staff (`hearth licence-keys seats`). */
  async seats(db: Queryable, organisation: Organisation): Promise<{ seats: LicenceSeat[]; limit: number }> {
    const rows = await db('licence_seats').where({ project_id: organisation.id }).orderBy([{ column: 'activated_at' }, { column: 'machine_id' }]);
    return { seats: rows.map(seatOf), limit: await this.seatLimit(db, organisation) };
  }

  /** Locks the organisation's row (seats are counted under it) and answers its plan's seats. */
  private async lockSeats(trx: Queryable, organisation: Organisation): Promise<number> {
    await trx.raw('SELECT id FROM projects WHERE id = ? FOR NO KEY UPDATE', [organisation.id]);
    return this.seatLimit(trx, organisation);
  }

  private async seatLimit(db: Queryable, organisation: Organisation): Promise<number> {
    const row = await db('projects as p').join('plans as pl', 'pl.name', 'p.plan_name').where('p.id', organisation.id).first(db.raw(`(pl.spec->>'licenceSeats')::int AS seats`));
    return Number(row?.seats ?? 0);
  }

  private async seatsUsed(db: Queryable, organisation: Organisation): Promise<number> {
    const [{ count }] = await db('licence_seats').where({ project_id: organisation.id }).count({ count: '*' });
    return Number(count);
  }

  private async standing(db: Queryable, organisation: Organisation, row: Record<string, unknown>, limit: number): Promise<LicenceStanding> {
    const seat = seatOf(row);
    const { token, expiresIn } = await this.tokens.issue(organisation, seat.machineId, seat.product);
    return { seat, seats: { used: await this.seatsUsed(db, organisation), limit }, token, expiresIn };
  }
}
