import { Type, type Static } from '@sinclair/typebox';
import { DASHBOARD_PERMISSIONS } from '../contract/dashboards';
import { Nullable, OneOf, Shape, Timestamp } from './common';

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
        provider: Type.String({ description: '`server` (signed in on a game server\'s word) or `idp` (the identity-provider sign-in)' }),
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
