import type { EnvironmentContext } from '../tenancy/environments';
import type { EnvironmentRegistry } from '../tenancy/registry';
import type { PlayerService } from '../players/service';
import type { PlayerTokenClaims } from './token-claims';
import { looksLikeServerKey, ServerKeyVerifier } from './server-keys';
import type { TokenService } from './tokens';

export type Principal =
  | { kind: 'server'; keyId: string; environment: EnvironmentContext }
  | { kind: 'player'; playerId: string; claims: PlayerTokenClaims; environment: EnvironmentContext };

/**
 * Turns a bearer credential into who is calling and in which environment, or null when it is
 * missing, malformed, unknown, revoked, expired, a refresh token, or its player is deleted or signed
 * out everywhere (all of which the API answers `unauthorized`).
 */
export class Authenticator {
  constructor(
    private readonly serverKeys: ServerKeyVerifier,
    private readonly tokens: TokenService,
    private readonly environments: EnvironmentRegistry,
    private readonly players: PlayerService,
  ) {}

  /** `rememberToken: false`: see TokenService.verify (the realtime server's authorize uses it). */
  async authenticate(credential: string, options: { rememberToken?: boolean } = {}): Promise<Principal | null> {
    if (looksLikeServerKey(credential)) {
      const key = await this.serverKeys.verify(credential);
      if (!key) return null;
      const environment = await this.environments.byId(key.environmentId);
      return environment ? { kind: 'server', keyId: key.keyId, environment } : null;
    }
    const claims = await this.tokens.verify(credential, { remember: options.rememberToken });
    if (!claims || claims.type !== 'access') return null;
    return this.playerPrincipal(claims);
  }

  /** The checks every use of a verified player token needs (also used for refresh tokens and sockets). */
  async playerPrincipal(claims: PlayerTokenClaims): Promise<Extract<Principal, { kind: 'player' }> | null> {
    const environment = await this.environments.byAppKey(claims.game);
    if (!environment) return null;
    const state = await this.players.state(claims.sub);
    if (!state || state.environmentId !== environment.id || claims.iat < state.tokensValidAfter) return null;
    return { kind: 'player', playerId: claims.sub, claims, environment };
  }
}
