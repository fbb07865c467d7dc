import { jwtVerify, errors as joseErrors } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Db } from '../db/knex';
import { TtlCache } from '../cache';
import type { InvalidationBus } from '../invalidation';
import { PLAYER_SIGNING_KEYS } from './signing-keys';
import { SignedTokenService, type SigningKeyRing } from './key-ring';
import { ACCESS_TOKEN_SECONDS, CLOCK_TOLERANCE_SECONDS, type PlayerTokenClaims, REFRESH_TOKEN_SECONDS, TOKEN_AUDIENCE, type TokenType } from './token-claims';

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/**
 * Signs and verifies player tokens (Ed25519 JWTs via jose, alg pinned to EdDSA, audience checked).
 * A verified token is remembered until it expires, so the hot path verifies each token once per
 * process; whether its player still exists and is not signed out is checked on every use elsewhere.
 */
export class TokenService extends SignedTokenService {
  private verified = new TtlCache<string, PlayerTokenClaims>(ACCESS_TOKEN_SECONDS * 1000, 200_000);

  constructor(pool: Db, masterKey: Buffer, bus: InvalidationBus) {
    super(pool, masterKey, PLAYER_SIGNING_KEYS, bus);
  }

  /**
   * Issues an access and a refresh token. `notBeforeSeconds` is the player's sign-out cut-off: a token
   * issued in the same second as a sign-out must still be newer than it.
   */
  async issue(playerId: string, appKey: string, notBeforeSeconds = 0): Promise<IssuedTokens> {
    // Right after a sign-out the cut-off is the next whole second: wait for it (under a second)
    // rather than stamp a future `iat`, which strict verifiers elsewhere refuse.
    // A loop, not one timer: timers run on the event loop's cached clock and can fire a little early.
    for (let wait = notBeforeSeconds * 1000 - Date.now(); wait > 0; wait = notBeforeSeconds * 1000 - Date.now()) {
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const issuedAt = Math.floor(Date.now() / 1000);
    const sign = (type: TokenType, lifetimeSeconds: number) =>
      this.ring.sign({ type, game: appKey }, { typ: 'JWT', audience: TOKEN_AUDIENCE, subject: playerId, lifetimeSeconds, issuedAt });
    const [accessToken, refreshToken] = await Promise.all([sign('access', ACCESS_TOKEN_SECONDS), sign('refresh', REFRESH_TOKEN_SECONDS)]);
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_SECONDS };
  }

  /** What `verify` answers for a token verified before, without waiting; undefined when it was not. */
  peek(token: string, now = Date.now()): PlayerTokenClaims | null | undefined {
    const hit = this.verified.get(token, now);
    if (!hit) return undefined;
    return hit.exp * 1000 + CLOCK_TOLERANCE_SECONDS * 1000 > now ? hit : null;
  }

  /**
   * The claims of a genuine, unexpired token of ours, or null. Type and player checks are the caller's.
   * `remember: false` verifies without keeping the token: a socket checks its token once, and a cache
   * entry per socket would only hold memory for as long as the socket lives.
   */
  async verify(token: string, options: { remember?: boolean } = {}): Promise<PlayerTokenClaims | null> {
    const now = Date.now();
    const known = this.peek(token, now);
    if (known !== undefined) return known;
    try {
      const { payload } = await jwtVerify(token, (header) => this.ring.keyFor(header.kid), {
        algorithms: ['EdDSA'],
        audience: TOKEN_AUDIENCE,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      const claims = payload as unknown as PlayerTokenClaims;
      if ((claims.type !== 'access' && claims.type !== 'refresh') || typeof claims.game !== 'string') return null;
      // Claims we never issue are refused even under our signature (a leaked key's or a bug's token,
      // found by test/security/api2): an `iat` in the future would pass every later sign-out's
      // cut-off (tokens with iat before it are refused), and a longer life than its type's would
      // stay good past any token we hand out. `issue` stamps iat = now and exp = iat + lifetime.
      const lifetime = claims.type === 'access' ? ACCESS_TOKEN_SECONDS : REFRESH_TOKEN_SECONDS;
      if (claims.iat > now / 1000 + CLOCK_TOLERANCE_SECONDS || claims.exp - claims.iat > lifetime) return null;
      const ttl = claims.exp * 1000 + CLOCK_TOLERANCE_SECONDS * 1000 - now;
      if (ttl > 0 && options.remember !== false) this.verified.set(token, claims, ttl);
      return claims;
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
      throw err;
    }
  }

  /**
   * A token signed with the player key set that is no player token: dashboard tokens
   * (dashboards/tokens.ts), each kind with its own audience and `typ` (SigningKeyRing.sign).
   */
  sign(...args: Parameters<SigningKeyRing['sign']>): Promise<string> {
    return this.ring.sign(...args);
  }

  /** The key that signs now, as it is: test/dashboards/access.test.ts forges tokens with it. */
  currentSigner(): { kid: string; privateKey: KeyObject } {
    const signer = this.ring.signer();
    return { kid: signer.kid, privateKey: signer.privateKey };
  }

  /** The public key a token of ours names by `kid` (the key set reloaded once when it is unknown). */
  verificationKey(kid: string | undefined): Promise<KeyObject> {
    return this.ring.keyFor(kid);
  }
}
