/**
 * Response shapes of spec §2 used by several areas, as TypeBox schemas (they feed /openapi.json).
 * Answers are exact: every object says additionalProperties false, and the test client holds every
 * answer of the suite to these schemas (test/support/contract.ts).
 */
import { Type } from '@sinclair/typebox';
import { Timestamp } from '../http/schema-helpers';

export const PlatformPlayer = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  displayName: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
}, { additionalProperties: false });

export const PlatformTokens = Type.Object({
  accessToken: Type.String({ description: 'signed JWT, lifetime 1 hour' }),
  refreshToken: Type.String({ description: 'lifetime 30 days, replaced on every refresh' }),
  expiresIn: Type.Number({ description: 'seconds until the access token expires (3600)' }),
  player: PlatformPlayer,
}, { additionalProperties: false });
