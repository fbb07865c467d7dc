import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Shape, Timestamp, Trimmed } from './common';

/** PlatformPlayer (spec §2). */
export const PlatformPlayer = Shape('PlatformPlayer', {
  id: Type.String({ minLength: 1, maxLength: 64 }),
  displayName: Nullable(Type.String()),
  createdAt: Timestamp,
});
export type PlatformPlayer = Static<typeof PlatformPlayer>;

/** What a sign-in or a refresh answers (spec §2 PlatformTokens). */
export const PlatformTokens = Shape('PlatformTokens', {
  accessToken: Type.String({ description: 'signed JWT, lifetime 1 hour' }),
  refreshToken: Type.String({ description: 'lifetime 30 days, replaced on every refresh' }),
  expiresIn: Type.Integer({ minimum: 1, description: 'seconds until the access token expires (3600)' }),
  player: PlatformPlayer,
});
export type PlatformTokens = Static<typeof PlatformTokens>;

/** PATCH /players/:playerId: the new display name, word-filtered before it is stored. */
export const RenamePlayerRequest = Type.Object({ displayName: Trimmed({ minLength: 1, maxLength: 40 }) }, { additionalProperties: false });
export type RenamePlayerRequest = Static<typeof RenamePlayerRequest>;
