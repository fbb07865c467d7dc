import type { Db, Queryable } from '../db/knex';
import type { InvalidationBus } from '../invalidation';
import { HashedKeyVerifier } from '../auth/hashed-keys';
import type { LicenceKeyAuthority, LicencePrincipal } from '../auth/authenticate';
import type { PublicJwk } from '../auth/signing-keys';
import { type Organisation, organisationById } from '../tenancy/organisations';
import type { LicenceStanding } from '../shapes/licence';
import { LICENCE_KEYS, looksLikeLicenceKey } from './keys';
import { LicenceSeats, type MachineActivation, type SeatStanding } from './seats';
import { LicenceTokenService } from './tokens';

/**
 * The licence of an organisation for its client plugins (docs/licence.md): its keys as credentials,
 * its plan's `licenceSeats` taken by machines (seats.ts), and the licence tokens a plugin checks
 * offline, one with every answer about a seat.
 */
export class LicenceService implements LicenceKeyAuthority {
  readonly tokens: LicenceTokenService;
  readonly seats = new LicenceSeats();
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

  /** POST /licence/activate: the machine's seat, taken now or held already, with a fresh token. */
  async activate(db: Queryable, organisation: Organisation, machine: MachineActivation): Promise<LicenceStanding> {
    return this.withToken(organisation, await this.seats.take(db, organisation, machine));
  }

  /** POST /licence/check: the machine's seat (not-found when it holds none), with a fresh token. */
  async check(db: Queryable, organisation: Organisation, machineId: string): Promise<LicenceStanding> {
    return this.withToken(organisation, await this.seats.check(db, organisation, machineId));
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
