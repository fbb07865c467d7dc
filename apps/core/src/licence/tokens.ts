import type { Db } from '../db/knex';
import type { InvalidationBus } from '../invalidation';
import type { Organisation } from '../tenancy/organisations';
import { SignedTokenService } from '../auth/key-ring';
import type { SigningKeySet } from '../auth/signing-keys';

/**
 * A licence token's `aud` is its organisation's own: this prefix and `<namespace>/<project>`
 * (licenceAudienceOf). A plugin is built with its organisation's audience and accepts no other, so a
 * token another organisation's key obtained is worth nothing to it (docs/licence.md); no player token
 * has such an audience.
 */
export const LICENCE_AUDIENCE_PREFIX = 'hearth-licence:';
/** The header `typ` of a licence token (explicit typing, RFC 8725 §3.11): a plugin checks it too. */
export const LICENCE_TOKEN_TYPE = 'licence+jwt';
/** How long a plugin may run offline on one check: a week. */
export const LICENCE_TOKEN_SECONDS = 7 * 24 * 3600;

/**
 * The licence tokens' own signing keys: a set apart from the player tokens' (a licence token can
 * never pass as a player token, nor the other way), rotated with `hearth signing-keys rotate
 * --key-set licence`; a retired key stays published until the last token it signed has expired.
 */
export const LICENCE_SIGNING_KEYS: SigningKeySet = {
  name: 'licence',
  sealingPurpose: 'licence-signing-keys',
  advisoryLock: 727_002,
  publishAfterRetirementMs: (LICENCE_TOKEN_SECONDS + 60) * 1000,
};

/** The audience of an organisation's licence tokens: `hearth-licence:<namespace>/<project>`, one string. */
export function licenceAudienceOf(organisation: { namespace: string; name: string }): string {
  return `${LICENCE_AUDIENCE_PREFIX}${organisation.namespace}/${organisation.name}`;
}

/** What a licence token says (docs/licence.md): verified offline by a plugin with the licence key set. */
export interface LicenceTokenClaims {
  /** The organisation's audience (licenceAudienceOf), a single string. */
  aud: string;
  type: 'licence';
  /** The machine the seat is for. */
  sub: string;
  /** The organisation: `<namespace>/<project>`. */
  org: string;
  /** The product the seat is for, one the presenting licence key covers. */
  product: string;
  iat: number;
  exp: number;
  jti: string;
}

/** Signs licence tokens (Ed25519 JWTs via jose, header `kid` and `typ` licence+jwt) with the licence key set. */
export class LicenceTokenService extends SignedTokenService {
  constructor(pool: Db, masterKey: Buffer, bus: InvalidationBus) {
    super(pool, masterKey, LICENCE_SIGNING_KEYS, bus);
  }

  async issue(organisation: Organisation, machineId: string, product: string): Promise<{ token: string; expiresIn: number }> {
    const token = await this.ring.sign(
      { type: 'licence', org: `${organisation.namespace}/${organisation.name}`, product },
      { typ: LICENCE_TOKEN_TYPE, audience: licenceAudienceOf(organisation), subject: machineId, lifetimeSeconds: LICENCE_TOKEN_SECONDS },
    );
    return { token, expiresIn: LICENCE_TOKEN_SECONDS };
  }
}
