import type { EnvironmentContext } from '../tenancy/environments';
import type { EnvironmentRegistry } from '../tenancy/registry';
import type { PlayerService, PlayerState } from '../players/service';
import { CLOCK_TOLERANCE_SECONDS, type PlayerTokenClaims } from './token-claims';
import { looksLikeServerKey, type ServerKeyVerifier } from './server-keys';
import type { TokenService } from './tokens';
import type { Organisation } from '../tenancy/organisations';
import type { DashboardPermission } from '../contract/dashboards';

/** A licence key's caller: an organisation, in no environment (licence routes only: docs/licence.md). */
export interface LicencePrincipal {
  kind: 'licence';
  keyId: string;
  organisation: Organisation;
}

/** A dashboard token's caller: a member of the project's dashboard, in one environment (docs/dashboards.md). */
export interface DashboardPrincipal {
  kind: 'dashboard';
  accountId: string;
  /** Read from the member's document on this call: empty once the member is removed or disabled. */
  permissions: DashboardPermission[];
  environment: EnvironmentContext;
}

export type Principal =
  | { kind: 'server'; keyId: string; environment: EnvironmentContext }
  | { kind: 'player'; playerId: string; claims: PlayerTokenClaims; environment: EnvironmentContext }
  | LicencePrincipal
  | DashboardPrincipal;

/** The callers that act in an environment (every kind but a licence key's). */
export type EnvironmentPrincipal = Exclude<Principal, LicencePrincipal>;

/** Who answers for licence keys (licence/service.ts): the authenticator only sends them on. */
export interface LicenceKeyAuthority {
  /** Whether a credential is meant as a licence key (its prefix). */
  claims(credential: string): boolean;
  authenticate(credential: string): Promise<LicencePrincipal | null>;
}

/** Who answers for dashboard tokens (dashboards/service.ts): the authenticator only sends them on. */
export interface DashboardTokenAuthority {
  /** Whether a credential is meant as a dashboard token (its header names it). */
  claims(credential: string): boolean;
  authenticate(credential: string): Promise<DashboardPrincipal | null>;
}

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
    private readonly licenceKeys: LicenceKeyAuthority,
    private readonly dashboards: DashboardTokenAuthority,
  ) {}

  /** `rememberToken: false`: see TokenService.verify (the realtime server's authorize uses it). */
  async authenticate(credential: string, options: { rememberToken?: boolean } = {}): Promise<Principal | null> {
    const known = this.peek(credential);
    if (known !== undefined) return known;
    if (this.licenceKeys.claims(credential)) return this.licenceKeys.authenticate(credential);
    if (looksLikeServerKey(credential)) {
      const key = await this.serverKeys.verify(credential);
      if (!key) return null;
      const environment = await this.environments.byId(key.environmentId);
      return environment ? { kind: 'server', keyId: key.keyId, environment } : null;
    }
    // A dashboard token names itself in its header; its member is read on every call (no peek).
    if (this.dashboards.claims(credential)) return this.dashboards.authenticate(credential);
    const claims = await this.tokens.verify(credential, { remember: options.rememberToken });
    if (!claims || claims.type !== 'access') return null;
    return this.playerPrincipal(claims);
  }

  /**
   * What `authenticate` answers for a player access token when everything it needs is in this
   * process's caches, without waiting (the hot path); undefined when something must be loaded.
   */
  peek(credential: string): Principal | null | undefined {
    const recent = this.recent.get(credential.slice(-RECENT_KEY_CHARS));
    if (recent !== undefined && recent.token === credential && this.stillHolds(recent)) return recent.principal;
    // A dashboard token is never in the player tokens' cache: undefined, so authenticate checks it.
    if (looksLikeServerKey(credential) || this.licenceKeys.claims(credential)) return undefined;
    const claims = this.tokens.peek(credential);
    if (claims === undefined) return undefined;
    if (!claims || claims.type !== 'access') return null;
    const environment = this.environments.peekByAppKey(claims.game);
    if (environment === undefined) return undefined;
    const state = environment ? this.players.peekState(claims.sub) : null;
    if (state === undefined) return undefined;
    const principal = principalOf(claims, environment, state);
    if (principal && environment && state) this.remember(credential, principal, environment, state);
    return principal;
  }

  /**
   * The player principals `peek` answered lately, by the last characters of their token (of its
   * signature, so no two tokens in use share them; a hit is compared whole). A client sends the same
   * token on every request: answering it again skips hashing the whole token in the tokens' cache
   * and making the principal anew, a tenth of a cached read's time in the pipeline.
   */
  private readonly recent = new Map<string, RecentPrincipal>();

  private remember(token: string, principal: PlayerPrincipal, environment: EnvironmentContext, state: PlayerState): void {
    if (this.recent.size >= RECENT_KEPT) this.recent.clear();
    const validUntil = (principal.claims.exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    this.recent.set(token.slice(-RECENT_KEY_CHARS), { token, principal, environment, state, validUntil });
  }

  /**
   * Whether `peek` would answer the same principal now: its token unexpired, and its environment and
   * player record the very objects it was made from (the caches make new ones on a reload, a plan
   * change, a sign-out everywhere or a deletion, and drop them when they age out).
   */
  private stillHolds(recent: RecentPrincipal): boolean {
    const { claims } = recent.principal;
    return (
      Date.now() < recent.validUntil &&
      this.environments.peekByAppKey(claims.game) === recent.environment &&
      this.players.peekState(claims.sub) === recent.state
    );
  }

  /** The checks every use of a verified player token needs (also used for refresh tokens and sockets). */
  async playerPrincipal(claims: PlayerTokenClaims): Promise<PlayerPrincipal | null> {
    const environment = await this.environments.byAppKey(claims.game);
    return principalOf(claims, environment, environment ? await this.players.state(claims.sub) : null);
  }
}

type PlayerPrincipal = Extract<Principal, { kind: 'player' }>;

interface RecentPrincipal {
  token: string;
  principal: PlayerPrincipal;
  environment: EnvironmentContext;
  state: PlayerState;
  /** When the token stops being good (its expiry, with the clock tolerance verification allows). */
  validUntil: number;
}

/** How many recent principals a process keeps (a flood of new tokens only resets the memo). */
const RECENT_KEPT = 10_000;
/** A token's last characters, the memo's key: 24 base64url characters of its Ed25519 signature. */
const RECENT_KEY_CHARS = 24;

function principalOf(claims: PlayerTokenClaims, environment: EnvironmentContext | null, state: PlayerState | null): PlayerPrincipal | null {
  if (!environment || !state || state.environmentId !== environment.id || claims.iat < state.tokensValidAfter) return null;
  return { kind: 'player', playerId: claims.sub, claims, environment };
}
