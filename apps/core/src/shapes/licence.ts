import { Type, type Static } from '@sinclair/typebox';
import { LicenceProductName } from '../contract/resources';
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

// What a plugin sends: declared once, for the route's validation and the document, and the service's types.

/** Printable ASCII, no spaces: what a plugin can read off a machine or its own build. */
const Word = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: '^[\\x21-\\x7E]+$', description });

const MachineId = Word(128, 'the machine, as the plugin identifies it (a stable hardware or install id)');

/** POST /licence/check and /licence/release: the machine. */
export const LicenceMachine = Type.Object({ machineId: MachineId }, { additionalProperties: false });
export type LicenceMachine = Static<typeof LicenceMachine>;

/** POST /licence/activate: the machine, and the plugin asking for its seat. */
export const LicenceActivation = Type.Object(
  {
    machineId: MachineId,
    product: Type.String({ ...LicenceProductName, description: 'the plugin asking (its product name): one the licence key covers' }),
    version: Word(64, "the plugin's version"),
  },
  { additionalProperties: false },
);
export type LicenceActivation = Static<typeof LicenceActivation>;
