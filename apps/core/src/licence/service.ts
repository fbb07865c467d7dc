import type { Db, Queryable } from '../db/knex';
import type { Clock } from '../clock';
import { inTransaction } from '../db/transaction';
import { Refusal } from '../errors';
import type { InvalidationBus } from '../invalidation';
import { HashedKeyVerifier } from '../auth/hashed-keys';
import type { LicenceKeyAuthority, LicencePrincipal } from '../auth/authenticate';
import type { PublicJwk } from '../auth/signing-keys';
import { type Organisation, organisationById } from '../tenancy/organisations';
import type { LicenceActivation, LicenceStanding } from '../shapes/licence';
import { LICENCE_KEYS, licenceKeyCovers, looksLikeLicenceKey } from './keys';
import { LicenceSeats, type SeatStanding } from './seats';
import { LicenceTokenService } from './tokens';

/**
 * The licence of an organisation for its client plugins (docs/licence.md): its keys as credentials,
 * its plan's `licenceSeats` taken by machines (seats.ts), and the licence tokens a plugin checks
 * offline, one with every answer about a seat. A token names its organisation (its `aud`) and a
 * product the presenting key covers, never one the client merely asked for.
 */
export class LicenceService implements LicenceKeyAuthority {
  readonly tokens: LicenceTokenService;
  readonly seats = new LicenceSeats();
  private readonly keys: HashedKeyVerifier;

  /** `pool` loads what every request of the process shares (the key cache, the signing keys). */
  constructor(
    private readonly pool: Db,
    masterKey: Buffer,
    bus: InvalidationBus,
    clock?: Clock,
  ) {
    this.tokens = new LicenceTokenService(pool, masterKey, bus);
    this.keys = new HashedKeyVerifier(LICENCE_KEYS, pool, bus, clock);
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
   * POST /licence/activate: the machine's seat, taken now or held already, with a fresh token. A
   * product the presenting key does not cover is forbidden (field `product`), and nothing changes.
   */
  async activate(db: Queryable, principal: LicencePrincipal, machine: LicenceActivation): Promise<LicenceStanding> {
    if (!(await licenceKeyCovers(db, principal.keyId, machine.product))) {
      throw new Refusal('forbidden', `This licence key does not cover product "${machine.product}"; a key activates only the products it was made for.`, {
        field: 'product',
      });
    }
    return this.withToken(principal.organisation, await this.seats.take(db, principal.organisation, machine));
  }

  /**
   * POST /licence/check: the machine's seat (not-found when it holds none), with a fresh token. A seat
   * for a product the presenting key does not cover is forbidden, and its check is not noted.
   */
  async check(db: Queryable, principal: LicencePrincipal, machineId: string): Promise<LicenceStanding> {
    const standing = await inTransaction(db, async (trx) => {
      const held = await this.seats.check(trx, principal.organisation, machineId);
      if (!(await licenceKeyCovers(trx, principal.keyId, held.seat.product))) {
        // Thrown inside the transaction: the check noted above is rolled back.
        throw new Refusal(
          'forbidden',
          `This licence key does not cover product "${held.seat.product}", which this machine's seat is for; activate it with a key that does.`,
        );
      }
      return held;
    });
    return this.withToken(principal.organisation, standing);
  }

  /** POST /licence/release: frees the machine's seat, if it holds one. */
  async release(db: Queryable, organisation: Organisation, machineId: string): Promise<void> {
    await this.seats.release(db, organisation, machineId);
  }

  private async withToken(organisation: Organisation, standing: SeatStanding): Promise<LicenceStanding> {
    const { token, expiresIn } = await this.tokens.issue(organisation, standing.seat.machineId, standing.seat.product);
    return { ...standing, token, expiresIn };
  }
}
