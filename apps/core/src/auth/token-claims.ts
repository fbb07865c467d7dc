/** The platform's fixed audience constant (spec §5.6): every player token carries it as `aud`. */
export const TOKEN_AUDIENCE = 'hearth-platform';
export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** Clock skew allowed when checking `exp`. */
export const CLOCK_TOLERANCE_SECONDS = 5;

export type TokenType = 'access' | 'refresh';

export interface PlayerTokenClaims {
  aud: string;
  type: TokenType;
  /** The environment's app key. */
  game: string;
  sub: string;
  iat: number;
  exp: number;
  jti: string;
}
