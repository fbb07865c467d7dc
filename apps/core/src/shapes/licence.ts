import { Type, type Static } from '@sinclair/typebox';
import { Shape, Timestamp } from './common';

/** A public key set as GET /.well-known/jwks.json and GET /licence/jwks.json answer it (RFC 7517, Ed25519 keys). */
export const JsonWebKeySet = Shape('JsonWebKeySet', {
  keys: Type.Array(
    Type.Object(
      { kty: Type.Literal('OKP'), crv: Type.Literal('Ed25519'), x: Type.String(), kid: Type.String(), alg: Type.Literal('EdDSA'), use: Type.Literal('sig') },
      { additionalProperties: false },
    ),
  ),
});
export type JsonWebKeySet = Static<typeof JsonWebKeySet>;

/** A machine's seat of its organisation's licence. */
export const LicenceSeat = Shape('LicenceSeat', {
  machineId: Type.String(),
  product: Type.String(),
  version: Type.String(),
  activatedAt: Timestamp,
  checkedAt: Timestamp,
});
export type LicenceSeat = Static<typeof LicenceSeat>;

/** What activate and check answer: the seat, how many of the licence's seats are taken, and a fresh licence token. */
export const LicenceStanding = Shape('LicenceStanding', {
  seat: LicenceSeat,
  seats: Type.Object({ used: Type.Integer({ minimum: 0 }), limit: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  token: Type.String({ description: 'a licence token: an Ed25519 JWT a plugin verifies offline with GET /licence/jwks.json' }),
  expiresIn: Type.Integer({ minimum: 1, description: 'seconds until the token expires' }),
});
export type LicenceStanding = Static<typeof LicenceStanding>;
