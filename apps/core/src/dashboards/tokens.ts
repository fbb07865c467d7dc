/**
 * Dashboard tokens (spec §5: a bearer token from POST /auth/dashboard, 3600 s). Ed25519 JWTs signed
 * with the player tokens' key set, but with their own audience and header `typ`: a player-token check
 * (audience `hearth-platform`) never accepts one, and this check never accepts a player token.
 * `sub` is the member's account id, `game` the environment's app key.
 */
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { TokenService } from '../auth/tokens';
import { CLOCK_TOLERANCE_SECONDS } from '../auth/token-claims';
import { DASHBOARD_TOKEN_SECONDS } from '../contract/dashboards';

export const DASHBOARD_TOKEN_AUDIENCE = 'hearth-dashboard';
export const DASHBOARD_TOKEN_TYP = 'hearth-dashboard+jwt';

export interface DashboardTokenClaims {
  sub: string;
  game: string;
  iat: number;
  exp: number;
}

/** Whether a credential says it is a dashboard token (its header, unverified): where to check it. */
export function looksLikeDashboardToken(credential: string): boolean {
  if (!credential.startsWith('eyJ')) return false;
  try {
    return decodeProtectedHeader(credential).typ === DASHBOARD_TOKEN_TYP;
  } catch {
    return false;
  }
}

export async function issueDashboardToken(tokens: TokenService, accountId: string, appKey: string): Promise<string> {
  return tokens.sign(
    { game: appKey },
    { typ: DASHBOARD_TOKEN_TYP, audience: DASHBOARD_TOKEN_AUDIENCE, subject: accountId, lifetimeSeconds: DASHBOARD_TOKEN_SECONDS },
  );
}

/** The claims of a genuine, unexpired dashboard token of ours, or null. */
export async function verifyDashboardToken(tokens: TokenService, token: string): Promise<DashboardTokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, (header) => tokens.verificationKey(header.kid), {
      algorithms: ['EdDSA'],
      audience: DASHBOARD_TOKEN_AUDIENCE,
      typ: DASHBOARD_TOKEN_TYP,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
    });
    const { sub, game, iat, exp } = payload as Partial<DashboardTokenClaims>;
    if (typeof sub !== 'string' || typeof game !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
    // As for player tokens: never a claim we do not issue (an iat ahead of now, a longer life).
    if (iat > Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS || exp - iat > DASHBOARD_TOKEN_SECONDS) return null;
    return { sub, game, iat, exp };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
}
