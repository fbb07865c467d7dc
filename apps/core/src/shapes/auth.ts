/**
 * Player sign-in (spec §4 Auth): what a sign-in or a refresh sends, declared once for the route's
 * validation and the document. The answer, PlatformTokens, is in ./players.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Trimmed } from './common';

/** POST /auth/server: the server's id for the player, and the name to give them. */
export const ServerSignInRequest = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 200, description: "the caller's id for the player" }),
    displayName: Type.Optional(Trimmed({ minLength: 1, maxLength: 40, description: "replaces the player's name when given" })),
  },
  { additionalProperties: false },
);
export type ServerSignInRequest = Static<typeof ServerSignInRequest>;

/** POST /auth/idp: the environment, and the provider's id token that proves the player. */
export const IdpSignInRequest = Type.Object(
  {
    appKey: Type.String({ minLength: 1, maxLength: 64, description: "the environment's app key" }),
    idToken: Type.String({ minLength: 1, maxLength: 8000, description: "the provider's Connect id token of the player's product user" }),
  },
  { additionalProperties: false },
);
export type IdpSignInRequest = Static<typeof IdpSignInRequest>;

/** POST /auth/refresh. */
export const RefreshRequest = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false });
export type RefreshRequest = Static<typeof RefreshRequest>;
