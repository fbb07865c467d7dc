import { Type, type Static } from '@sinclair/typebox';
import { DASHBOARD_PERMISSIONS } from '../contract/dashboards';
import { Nullable, OneOf, PageQuery, Shape, Timestamp } from './common';

const Permissions = Type.Array(OneOf(DASHBOARD_PERMISSIONS), { description: "the member's permissions in the environment" });

/** What POST /auth/dashboard answers (spec §4 Custom dashboards). */
export const DashboardTokens = Shape('DashboardTokens', {
  accessToken: Type.String({ description: 'the dashboard token: Authorization: Bearer <accessToken>' }),
  expiresIn: Type.Integer({ minimum: 1, description: 'seconds until the token expires (3600)' }),
  appKey: Type.String({ description: 'the environment the token acts in' }),
  permissions: Permissions,
});
export type DashboardTokens = Static<typeof DashboardTokens>;

/** GET /dashboard/session. */
export const DashboardSession = Shape('DashboardSession', {
  appKey: Type.String(),
  account: Type.Object({ id: Type.String({ description: 'the member account the token belongs to' }) }, { additionalProperties: false }),
  permissions: Permissions,
});
export type DashboardSession = Static<typeof DashboardSession>;

/** One entry of GET /players. */
export const DashboardPlayer = Shape('DashboardPlayer', {
  id: Type.String({ minLength: 1, maxLength: 64 }),
  displayName: Nullable(Type.String()),
  identities: Type.Array(
    Type.Object(
      {
        provider: Type.String({ description: "`server` (signed in on a game server's word) or `idp` (the identity-provider sign-in)" }),
        subject: Type.String({ description: "the provider's id for the player" }),
      },
      { additionalProperties: false },
    ),
  ),
  hasGreenMindAccount: Type.Boolean({ description: 'whether the player signed in through an account of the service (the identity-provider sign-in)' }),
  createdAt: Timestamp,
  lastSeenAt: Nullable(Timestamp, { description: 'the last sign-in or token refresh; null before the first since this was kept' }),
});
export type DashboardPlayer = Static<typeof DashboardPlayer>;

// What callers send: declared once, for the route's validation and the document, and the service's types.

/** POST /auth/dashboard: the environment's app key, and the provider's code with what it was asked with (PKCE). */
export const DashboardSignInRequest = Type.Object(
  {
    appKey: Type.String({ minLength: 1, maxLength: 64, description: "the environment's app key (one of the project's)" }),
    code: Type.String({ minLength: 1, maxLength: 2048, description: "the provider's authorization code" }),
    codeVerifier: Type.String({ minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$', description: 'the PKCE code verifier the code was asked with' }),
    nonce: Type.String({ minLength: 16, maxLength: 256, description: 'the nonce the code was asked with; the id token must carry it' }),
  },
  { additionalProperties: false },
);
export type DashboardSignInRequest = Static<typeof DashboardSignInRequest>;
/** What is exchanged at the provider: the sign-in without the app key, which chose the environment. */
export type CodeExchange = Omit<DashboardSignInRequest, 'appKey'>;

/** GET /players: a search, a page at a time. */
export const PlayerSearchQuery = Type.Object(
  { q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'part of a display name, or a player id or identity subject' })), ...PageQuery },
  { additionalProperties: false },
);
export type PlayerSearchQuery = Static<typeof PlayerSearchQuery>;
