/**
 * Who may hold a socket, and until when (docs/realtime.md "Authorizing", "Heartbeats and expiry"):
 * the authorize frame (the API's own token checks, then the sessions the player holds a seat in),
 * authorize again with a fresh token, the token's expiry, and sign-out or deletion of the player.
 */
import { Refusal, type Invalidation, type Logger } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { environmentRefusal } from '@hearth/core/tenancy';
import type { PlatformSession } from '@hearth/core/shapes';
import type { Principal } from '@hearth/core/auth';
import { CLOSE, encodeFrame, errorFrame, type ClientFrame, type FrameId } from './protocol';
import type { SessionReader } from './session-reader';
import type { SessionStates } from './session-states';
import type { SocketIndex } from './socket-index';
import { AUTHORIZED, AUTHORIZING, type HearthSocket, type IdentifiedSocket, type SocketHost, identify, isIdentified } from './socket';
import { TokenExpiries } from './token-expiries';

export type PlayerPrincipal = Extract<Principal, { kind: 'player' }>;
type AuthorizeFrame = Extract<ClientFrame, { type: 'authorize' }>;

/** A socket's token is verified once per authorize: the core need not keep it (see TokenService.verify). */
const NOT_REMEMBERED = { rememberToken: false };

/**
 * Why a principal may not hold a socket, or null: the API's checks (credential, review, service
 * switch), and a browser page's origin, which the token's environment must allow (`origin` null: a
 * native client).
 */
export function refusalOf(principal: Principal | null, nowMs: number, origin: string | null = null): Refusal | null {
  if (!principal) return new Refusal('unauthorized', 'The token is not valid.');
  if (principal.kind !== 'player')
    return new Refusal('unauthorized', "The socket takes a player's access token, not a server key, a licence key or a dashboard token.");
  if (principal.claims.exp * 1000 <= nowMs) return new Refusal('unauthorized', 'The token has expired.');
  if (origin !== null && !principal.environment.origins.game.has(origin)) {
    return new Refusal('forbidden', 'This page’s origin is not allowed in the token’s environment (its spec.cors.allowedOrigins).');
  }
  return environmentRefusal(principal.environment, 'sessions');
}

/**
 * The sessions a player holds a seat in as they are now: what the read listed, brought up to date with
 * the newest states of the sessions of the player's environment that changed while it ran (each the
 * newest known, SessionStates). A session the player took a seat in meanwhile is added; one whose
 * seat ended is left out.
 */
export function seatedNow(listed: PlatformSession[], changed: PlatformSession[], playerId: string): PlatformSession[] {
  const latest = new Map<string, PlatformSession>(listed.map((s) => [s.id, s]));
  for (const session of changed) latest.set(session.id, session);
  return [...latest.values()].filter((session) => session.players.some((p) => p.playerId === playerId));
}

export interface AuthorizationOptions {
  core: Pick<HearthCore, 'authenticator' | 'players'>;
  sessions: SessionReader;
  index: SocketIndex;
  states: SessionStates;
  host: SocketHost;
  /** The socket is authorized and follows its sessions: the server counts it and handles the frames that waited. */
  admitted(ws: HearthSocket): void;
  log: Logger;
}

export class Authorization {
  readonly expiries = new TokenExpiries<HearthSocket>();
  /** Sockets whose token passed and whose sessions are being listed: a sign-out meanwhile must reach them too. */
  private readonly listing = new Set<IdentifiedSocket>();

  constructor(private readonly options: AuthorizationOptions) {}

  /** The first authorize of a socket (AWAITING): on success it is AUTHORIZED and follows the sessions it holds a seat in. */
  async authorize(ws: HearthSocket, frame: AuthorizeFrame): Promise<void> {
    const { sessions, index, states, host } = this.options;
    ws.state = AUTHORIZING;
    let start = -1;
    try {
      const principal = await this.playerOf(ws, frame, AUTHORIZING);
      if (!principal) return;
      const { playerId, environment: env, claims } = principal;
      const identified = identify(ws, playerId, env);
      ws.iat = claims.iat;
      ws.exp = claims.exp;
      this.listing.add(identified);
      start = states.begin();
      const listed = await sessions.listForPlayer(env, playerId);
      this.listing.delete(identified);
      if (ws.state !== AUTHORIZING) return;
      // Each listed session as the newer of the read and what arrived meanwhile.
      const read = listed.map(({ session, version }) => states.read(env.id, session, version));
      const seated = seatedNow(read, states.changedSince(start, env.id), playerId);

      // From here to the end nothing awaits: no event can fall between following and being indexed.
      ws.state = AUTHORIZED;
      index.add(identified);
      this.expiries.schedule(ws);
      host.send(ws, encodeFrame('authorized', { playerId }, frame.id), 'authorized');
      for (const session of seated) {
        index.follow(identified, session.id, true);
        host.send(ws, encodeFrame('session', { session }), 'session');
      }
      this.options.admitted(ws);
    } catch (err) {
      host.fault(ws, err, 'authorize failed');
    } finally {
      if (start >= 0) states.end(start);
    }
  }

  /** authorize again on an authorized socket: a fresh token of the same player moves the expiry on. */
  async reauthorize(ws: HearthSocket, frame: AuthorizeFrame): Promise<void> {
    const { host } = this.options;
    try {
      const player = await this.playerOf(ws, frame, AUTHORIZED);
      if (!player) return;
      if (player.playerId !== ws.playerId) {
        host.send(ws, errorFrame('forbidden', 'A socket belongs to one player: open another socket for another player.', undefined, frame.id), 'error');
        return;
      }
      this.expiries.cancel(ws);
      ws.iat = Math.max(ws.iat, player.claims.iat);
      ws.exp = player.claims.exp;
      ws.env = player.environment;
      this.expiries.schedule(ws);
      host.send(ws, encodeFrame('authorized', { playerId: ws.playerId }, frame.id), 'authorized');
    } catch (err) {
      host.fault(ws, err, 'authorize failed');
    }
  }

  /**
   * The player an authorize frame's token names, or null when there is none to act on: the socket left
   * `state` while the token was checked (it closed, or another authorize got there first), or the
   * token is refused (refusalOf: the socket is refused and closed).
   */
  private async playerOf(ws: HearthSocket, frame: AuthorizeFrame, state: typeof AUTHORIZING | typeof AUTHORIZED): Promise<PlayerPrincipal | null> {
    const principal = await this.options.core.authenticator.authenticate(frame.token, NOT_REMEMBERED);
    if (ws.state !== state) return null;
    const refusal = refusalOf(principal, Date.now(), ws.origin);
    if (refusal) {
      this.refuse(ws, refusal, frame.id);
      return null;
    }
    return principal as PlayerPrincipal;
  }

  /** A refused authorization: the error, then close 4401 with the error's code as reason. */
  refuse(ws: HearthSocket, err: Refusal, id?: FrameId): void {
    this.options.host.send(ws, errorFrame(err.code, err.message, err.details, id), 'error');
    this.options.host.close(ws, CLOSE.unauthorized, err.code);
  }

  /** Closes the sockets whose token expired by `nowMs` (4401 token-expired). */
  sweepExpiries(nowMs: number): void {
    const { host } = this.options;
    this.expiries.sweep(nowMs, (ws) => {
      host.send(ws, errorFrame('unauthorized', 'The token has expired.'), 'error');
      host.close(ws, CLOSE.unauthorized, 'token-expired');
    });
  }

  /** Sign-out everywhere and deletion end the player's sockets (their tokens no longer work), a retired environment all of its sockets. */
  onInvalidation(event: Invalidation): void {
    if (event.kind === 'environment-retired') {
      this.closeEnvironment(event.environmentId);
      return;
    }
    if (event.kind !== 'player' || event.reason === 'renamed') return;
    const { core, index, host, log } = this.options;
    const { playerId, reason } = event;
    const socketsNow = () => [...index.socketsOf(playerId), ...[...this.listing].filter((ws) => ws.playerId === playerId)];
    if (socketsNow().length === 0) return;
    // The player's cached state was dropped by this same event: this reads the cut-off as it is now,
    // so a socket authorized with a token issued after the sign-out stays.
    core.players
      .state(playerId)
      .then((state) => {
        for (const ws of socketsNow()) {
          if (state && state.environmentId === ws.env.id && ws.iat >= state.tokensValidAfter) continue;
          host.send(ws, errorFrame('unauthorized', reason === 'deleted' ? 'The player was deleted.' : 'The player was signed out everywhere.'), 'error');
          host.close(ws, CLOSE.unauthorized, reason);
        }
      })
      .catch((err) => {
        // Cannot tell which tokens are still good: end them all, the client signs in or reconnects.
        log.warn({ err: (err as Error).message }, 'player state unavailable; closing the player’s sockets');
        for (const ws of socketsNow()) host.close(ws, CLOSE.unauthorized, reason);
      });
  }

  /**
   * Its GameEnvironment was deleted: every token of it is refused from now on (the `environments`
   * event before this one dropped the cached contexts), so its sockets end, 4401 environment-retired.
   */
  private closeEnvironment(environmentId: number): void {
    const { index, host } = this.options;
    const sockets = [...index.socketsIn(environmentId), ...[...this.listing].filter((ws) => ws.env?.id === environmentId)];
    for (const ws of sockets) {
      host.send(ws, errorFrame('unauthorized', 'The environment was retired: its tokens are no longer valid.'), 'error');
      host.close(ws, CLOSE.unauthorized, 'environment-retired');
    }
  }

  /** The socket closed: it no longer waits for its expiry or its sessions' listing. */
  forget(ws: HearthSocket): void {
    if (isIdentified(ws)) this.listing.delete(ws);
    this.expiries.cancel(ws);
  }
}
