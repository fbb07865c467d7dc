/**
 * The sessions socket (protocol version 1): authorizes sockets with the player's access token, follows
 * the sessions the player holds a seat in (and those it subscribes to), and fans out the session
 * events the API processes publish on SESSION_EVENTS_CHANNEL. docs/realtime.md is the client's view.
 *
 * Built to hold tens of thousands of idle sockets in one process: the state of a socket lives in a few
 * fields of the socket object itself, its events reach the server through one shared `emit` (no
 * listener, no closure per socket), and there is no timer per socket (one tick sweeps authorize
 * deadlines and token expiries; heartbeats go to one slice of the sockets a second, so tens of
 * thousands of pings never leave in one burst).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import {
  ApiError,
  SESSION_EVENTS_CHANNEL,
  environmentRefusal,
  withoutTrailingSlashes,
  type EnvironmentContext,
  type HearthCore,
  type Invalidation,
  type Logger,
  type PlatformSession,
  type Principal,
  type SessionEvent,
  type Unsubscribe,
} from '@hearth/core';
import {
  AUTHORIZE_TIMEOUT_MS,
  CLOSE,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  PRE_AUTHORIZE_FRAMES,
  SLOW_CONSUMER_BYTES,
  SOCKET_PATH,
  effectiveLimits,
  encodeFrame,
  errorFrame,
  parseClientFrame,
  type ClientFrame,
  type FrameId,
  type ServerFrameType,
} from './protocol';
import { RealtimeMetrics } from './metrics';
import { RecentEvents } from './recent-events';

/** What the socket needs of the sessions service (core.sessions). */
export interface SessionReader {
  /** The session, or ApiError not-found when it is not of that environment. */
  get(env: EnvironmentContext, sessionId: string): Promise<PlatformSession>;
  /** The sessions the player holds a seat in. */
  listForPlayer(env: EnvironmentContext, playerId: string): Promise<PlatformSession[]>;
}

/** core.sessions reading on the pool: the socket reads committed sessions, outside any transaction. */
export function poolSessionReader(core: HearthCore): SessionReader {
  return {
    get: (env, sessionId) => core.sessions.get(core.db, env, sessionId),
    listForPlayer: (env, playerId) => core.sessions.listForPlayer(core.db, env, playerId),
  };
}

export interface RealtimeServerOptions {
  core: HearthCore;
  /** Defaults to core.sessions on the pool (poolSessionReader). */
  sessions?: SessionReader;
  metrics?: RealtimeMetrics;
  heartbeatMs?: number;
  authorizeTimeoutMs?: number;
  /** How often authorize deadlines and token expiries are swept (their precision). */
  tickMs?: number;
  /** The path upgrades are taken on (`attach`, `handleUpgrade`). */
  path?: string;
}

const AWAITING = 0; // open, authorize not yet received
const AUTHORIZING = 1; // authorize received, being checked
const AUTHORIZED = 2;
const CLOSED = 3; // closed by either side, or being closed: nothing more is sent or handled

const WS_ERROR_CLOSE_CODES: Record<string, number> = { WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 1009, WS_ERR_INVALID_UTF8: 1007 };
const TEXT = { binary: false };
/** A socket's token is verified once per authorize: the core need not keep it (see TokenService.verify). */
const NOT_REMEMBERED = { rememberToken: false };

/** One socket and its state: plain fields, so an idle socket costs a few words beyond `ws` itself. */
export class HearthSocket extends WebSocket {
  state = AWAITING;
  playerId: string | null = null;
  env: EnvironmentContext | null = null;
  /** The token's `iat` (sign-out cut-off check) and `exp` (seconds). */
  iat = 0;
  exp = 0;
  /** Sessions followed because the player holds a seat: they do not count against maxSubscriptions. */
  seated: string[] | null = null;
  /** Sessions followed through `subscribe`: they count against maxSubscriptions. */
  watched: string[] | null = null;
  /** Whether the socket answered the last heartbeat ping. */
  alive = true;
  /** The heartbeat slice the socket is in. */
  slice = 0;
  /** Frames received before authorization completed. */
  early = 0;
  /** Frames received while the authorize frame was being checked, handled in order afterwards. */
  queue: ClientFrame[] | null = null;
  /** Rate windows (seconds since the server's clock base) and counts in the current second and minute. */
  second = -1;
  perSecond = 0;
  perMinute = 0;
  /** After an `error rate-limited`: the second the refusing window ends; a frame before then closes the socket. */
  limitedUntil = -1;
  /** The close code this side chose, for the metrics. */
  closeCode = 0;
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function pathOf(url: string | undefined): string {
  return withoutTrailingSlashes((url ?? '/').split('?', 1)[0]);
}

function remove(list: string[] | null, id: string): boolean {
  if (!list) return false;
  const i = list.indexOf(id);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

export class RealtimeServer {
  readonly metrics: RealtimeMetrics;
  readonly path: string;
  private readonly core: HearthCore;
  private readonly sessions: SessionReader;
  private readonly log: Logger;
  private readonly wss: WebSocketServer;
  private readonly heartbeatMs: number;
  private readonly authorizeTimeoutMs: number;
  private readonly tickMs: number;

  /** Every open socket, in heartbeat slices: each heartbeat tick pings one slice. */
  private readonly slices: Set<HearthSocket>[];
  private nextSlice = 0;
  private beatSlice = 0;
  /** A player's sockets: the socket itself when it is the only one (the usual case), else a list. */
  private readonly byPlayer = new Map<string, HearthSocket | HearthSocket[]>();
  private readonly bySession = new Map<string, Set<HearthSocket>>();
  /** Token expiries: second → sockets whose token expires then. */
  private readonly expiries = new Map<number, Set<HearthSocket>>();
  private expirySweptTo = Math.floor(Date.now() / 1000);
  /**
   * Sockets awaiting authorize, in order of arrival (so of deadline), and when authorize is due for
   * each (ms): kept here, not on the socket, as only the first seconds of a socket need it.
   * `awaitingHead` is the first live one.
   */
  private awaiting: (HearthSocket | null)[] = [];
  private awaitingDue: number[] = [];
  private awaitingHead = 0;
  /** Rate windows count seconds from a minute boundary, so they stay small integers. */
  private readonly clockBase = Math.floor(Date.now() / 60_000) * 60_000;
  private readonly recent = new RecentEvents();
  /** Sockets whose token passed and whose sessions are being listed: a sign-out meanwhile must reach them too. */
  private readonly listing = new Set<HearthSocket>();

  private pending = 0;
  private authorized = 0;
  private running = false;
  private stopping = false;
  private ticker?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private unsubscribeEvents?: Unsubscribe;
  private stopBus?: () => void;

  private readonly out: Record<ServerFrameType, { inc(n?: number): void }>;
  private readonly upgradeListener: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

  constructor(options: RealtimeServerOptions) {
    this.core = options.core;
    this.sessions = options.sessions ?? poolSessionReader(options.core);
    this.metrics = options.metrics ?? new RealtimeMetrics();
    this.path = options.path ?? SOCKET_PATH;
    this.log = options.core.logger.child({ component: 'realtime' });
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.authorizeTimeoutMs = options.authorizeTimeoutMs ?? AUTHORIZE_TIMEOUT_MS;
    this.tickMs = options.tickMs ?? 1000;
    // About a second between heartbeat ticks (a short heartbeat, as in tests, is one slice).
    this.slices = Array.from({ length: Math.max(1, Math.round(this.heartbeatMs / 1000)) }, () => new Set<HearthSocket>());

    // ws reports a socket's events through the socket's `emit`: this server's own socket class takes
    // them there, so a socket carries no listener (four of them grow an emitter's listener table by
    // about 100 bytes) and no closure. Listeners added with `on` still hear every event.
    const server = this;
    class ServerSocket extends HearthSocket {
      override emit(event: string | symbol, ...args: unknown[]): boolean {
        switch (event) {
          case 'message':
            server.onFrame(this, args[0] as RawData, args[1] as boolean);
            break;
          case 'close':
            server.onClosed(this, args[0] as number);
            break;
          case 'ping':
            server.onPing(this, args[0] as Buffer);
            break;
          case 'pong':
            this.alive = true;
            break;
          case 'error': {
            const err = args[0] as Error & { code?: string };
            // After a protocol error (an oversized frame: 1009) ws closes the socket itself, with that code.
            if (this.closeCode === 0 && err.code?.startsWith('WS_ERR_')) this.closeCode = WS_ERROR_CLOSE_CODES[err.code] ?? 1002;
            server.forget(this);
            // An emitter throws an 'error' nobody listens to: handled here, it goes on only to listeners.
            return this.listenerCount('error') > 0 ? super.emit(event, ...args) : true;
          }
        }
        return super.emit(event, ...args);
      }
    }
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      // The client's pings are answered in onPing: ws's own answer keeps a closure on every socket.
      autoPong: false,
      maxPayload: MAX_FRAME_BYTES,
      WebSocket: ServerSocket,
    });
    const types: ServerFrameType[] = ['authorized', 'subscribed', 'session', 'session-closed', 'error', 'pong'];
    this.out = Object.fromEntries(types.map((t) => [t, this.metrics.framesOut.labels(t)])) as RealtimeServer['out'];
    this.upgradeListener = (req, socket, head) => {
      if (!this.handleUpgrade(req, socket, head)) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      }
    };
  }

  /** Follows session events and player invalidations; starts the tick and the heartbeat. */
  async start(): Promise<void> {
    this.unsubscribeEvents = await this.core.coordination.subscribe(SESSION_EVENTS_CHANNEL, (message) => this.onSessionEvent(message));
    this.stopBus = this.core.bus.on((event) => this.onInvalidation(event));
    this.ticker = setInterval(() => this.tick(Date.now()), this.tickMs);
    this.ticker.unref();
    this.heartbeat = setInterval(() => this.beat(), this.heartbeatMs / this.slices.length);
    this.heartbeat.unref();
    this.running = true;
  }

  /** Ready while it follows session events and is not shutting down. */
  get ready(): boolean {
    return this.running && !this.stopping;
  }

  stats(): { connections: number; pending: number; authorized: number; sessionsFollowed: number } {
    const connections = this.slices.reduce((n, slice) => n + slice.size, 0);
    return { connections, pending: this.pending, authorized: this.authorized, sessionsFollowed: this.bySession.size };
  }

  /** Serves the socket on an existing HTTP server (`hearth dev`: the API's own port). */
  attach(server: http.Server): void {
    server.on('upgrade', this.upgradeListener);
  }

  detach(server: http.Server): void {
    server.off('upgrade', this.upgradeListener);
  }

  /** Takes an upgrade request for this server's path; answers false (touching nothing) for other paths. */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (pathOf(req.url) !== this.path) return false;
    if (!this.ready) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws as HearthSocket));
    return true;
  }

  /** Stops taking sockets, closes every open one with `code` (1001: going away) and waits a moment for them. */
  async close(code: number = CLOSE.goingAway, waitMs = 2000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.ticker);
    clearInterval(this.heartbeat);
    this.stopBus?.();
    await this.unsubscribeEvents?.().catch(() => undefined);
    const open = this.slices.flatMap((slice) => [...slice]);
    const closed = open.map((ws) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once('close', () => resolve()))));
    for (const ws of open) this.closeSocket(ws, code, 'going-away');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    for (const ws of open) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
    this.running = false;
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  // ---- connections -------------------------------------------------------------------------------

  private onConnection(ws: HearthSocket): void {
    ws.slice = this.nextSlice;
    this.nextSlice = (this.nextSlice + 1) % this.slices.length;
    this.slices[ws.slice].add(ws);
    this.awaiting.push(ws);
    this.awaitingDue.push(Date.now() + this.authorizeTimeoutMs);
    this.pending++;
    this.metrics.connections.set({ state: 'pending' }, this.pending);
  }

  private onClosed(ws: HearthSocket, code: number): void {
    this.forget(ws);
    this.metrics.closes.inc({ code: String(ws.closeCode || code) });
  }

  /**
   * A WebSocket ping from the client is answered with its payload, as RFC 6455 asks. A client that
   * pings without reading the answers is a slow consumer like any other.
   */
  private onPing(ws: HearthSocket, data: Buffer): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > SLOW_CONSUMER_BYTES) {
      this.closeSocket(ws, CLOSE.policy, 'slow-consumer');
      return;
    }
    ws.pong(data);
  }

  /** Closes from this side: nothing more is handled or sent, the socket leaves every map at once. */
  private closeSocket(ws: HearthSocket, code: number, reason: string): void {
    if (ws.closeCode === 0) ws.closeCode = code;
    this.forget(ws);
    ws.close(code, reason);
  }

  /** Drops every trace of a socket (idempotent). */
  private forget(ws: HearthSocket): void {
    if (ws.state === CLOSED) return;
    const was = ws.state;
    ws.state = CLOSED;
    ws.queue = null;
    this.slices[ws.slice].delete(ws);
    this.listing.delete(ws);
    if (was === AUTHORIZED) {
      this.authorized--;
      this.metrics.connections.set({ state: 'authorized' }, this.authorized);
      this.unindexPlayer(ws);
      for (const id of ws.seated ?? []) this.unindexSession(ws, id);
      for (const id of ws.watched ?? []) this.unindexSession(ws, id);
      ws.seated = ws.watched = null;
      this.expiries.get(ws.exp)?.delete(ws);
    } else {
      this.pending--;
      this.metrics.connections.set({ state: 'pending' }, this.pending);
    }
  }

  // ---- frames ------------------------------------------------------------------------------------

  private onFrame(ws: HearthSocket, data: RawData, isBinary: boolean): void {
    if (ws.state === CLOSED) return;
    const limits = ws.state === AUTHORIZED ? effectiveLimits(ws.env!.plan.realtime) : null;
    if (limits && byteLength(data) > limits.maxMessageBytes) {
      this.metrics.framesIn.inc({ type: 'too-big' });
      this.closeSocket(ws, CLOSE.tooBig, 'message-too-big');
      return;
    }
    const parsed = isBinary
      ? { error: new ApiError('invalid-request', 'Frames are JSON text, not binary.', { field: 'frame' }) }
      : parseClientFrame(data.toString());
    const id = (parsed as { id?: FrameId }).id;

    if (limits) {
      const verdict = this.countFrame(ws, limits);
      if (verdict === 'close') {
        this.metrics.framesIn.inc({ type: 'rate-limited' });
        this.closeSocket(ws, CLOSE.policy, 'rate-limited');
        return;
      }
      if (verdict > 0) {
        this.metrics.framesIn.inc({ type: 'rate-limited' });
        this.send(ws, errorFrame('rate-limited', `Too many frames; wait ${verdict} s before sending again, or the socket is closed.`, { retryAfterSeconds: verdict }, id), 'error');
        return;
      }
    } else if (++ws.early > PRE_AUTHORIZE_FRAMES) {
      this.closeSocket(ws, CLOSE.policy, 'too-many-frames');
      return;
    }

    if ('error' in parsed) {
      this.metrics.framesIn.inc({ type: 'invalid' });
      const err = parsed.error;
      this.send(ws, errorFrame(err.code, err.message, err.details, id), 'error');
      return;
    }
    this.metrics.framesIn.inc({ type: parsed.type });
    this.dispatch(ws, parsed);
  }

  private dispatch(ws: HearthSocket, frame: ClientFrame): void {
    if (ws.state === AWAITING) {
      if (frame.type === 'authorize') void this.authorize(ws, frame);
      else this.refuseAuthorization(ws, new ApiError('unauthorized', 'The first frame must be authorize.'), frame.id);
      return;
    }
    if (ws.state === AUTHORIZING) {
      (ws.queue ??= []).push(frame);
      return;
    }
    if (ws.state !== AUTHORIZED) return;
    switch (frame.type) {
      case 'authorize':
        void this.reauthorize(ws, frame);
        return;
      case 'subscribe':
        void this.subscribe(ws, frame.sessionId, frame.id);
        return;
      case 'unsubscribe':
        this.unsubscribe(ws, frame.sessionId, frame.id);
        return;
      case 'ping':
        this.send(ws, encodeFrame('pong', {}, frame.id), 'pong');
        return;
    }
  }

  /**
   * Fixed clock windows (a second from .000, a minute from :00). Answers 0 when the frame may go on,
   * the seconds to wait when it passes a limit (it is refused with an error, not counted), or 'close'
   * for a frame sent before the window that refused the previous one ended.
   */
  private countFrame(ws: HearthSocket, limits: { messagesPerSecond: number; messagesPerMinute: number }): number | 'close' {
    const second = Math.floor((Date.now() - this.clockBase) / 1000);
    if (second < ws.limitedUntil) return 'close';
    if (second !== ws.second) {
      if (Math.floor(second / 60) !== Math.floor(ws.second / 60)) ws.perMinute = 0;
      ws.perSecond = 0;
      ws.second = second;
    }
    if (ws.perSecond >= limits.messagesPerSecond) {
      ws.limitedUntil = second + 1;
      return 1;
    }
    if (ws.perMinute >= limits.messagesPerMinute) {
      ws.limitedUntil = (Math.floor(second / 60) + 1) * 60;
      return ws.limitedUntil - second;
    }
    ws.perSecond++;
    ws.perMinute++;
    return 0;
  }

  // ---- authorization -----------------------------------------------------------------------------

  /** Why a principal may not hold a socket, or null: the API's checks (credential, review, service switch). */
  private refusalOf(principal: Principal | null): ApiError | null {
    if (!principal) return new ApiError('unauthorized', 'The token is not valid.');
    if (principal.kind !== 'player') return new ApiError('unauthorized', "The socket takes a player's access token, not a server key.");
    if (principal.claims.exp * 1000 <= Date.now()) return new ApiError('unauthorized', 'The token has expired.');
    return environmentRefusal(principal.environment, 'sessions');
  }

  private refuseAuthorization(ws: HearthSocket, err: ApiError, id?: FrameId): void {
    this.send(ws, errorFrame(err.code, err.message, err.details, id), 'error');
    this.closeSocket(ws, CLOSE.unauthorized, err.code);
  }

  private async authorize(ws: HearthSocket, frame: Extract<ClientFrame, { type: 'authorize' }>): Promise<void> {
    ws.state = AUTHORIZING;
    let start = -1;
    try {
      const principal = await this.core.authenticator.authenticate(frame.token, NOT_REMEMBERED);
      if (ws.state !== AUTHORIZING) return;
      const refusal = this.refusalOf(principal);
      if (refusal) {
        this.refuseAuthorization(ws, refusal, frame.id);
        return;
      }
      const { playerId, environment: env, claims } = principal as Extract<Principal, { kind: 'player' }>;
      ws.playerId = playerId;
      ws.env = env;
      ws.iat = claims.iat;
      ws.exp = claims.exp;
      this.listing.add(ws);
      start = this.recent.begin();
      const listed = await this.sessions.listForPlayer(env, playerId);
      this.listing.delete(ws);
      if (ws.state !== AUTHORIZING) return;

      // What was listed, brought up to date with the events that arrived meanwhile.
      const latest = new Map<string, PlatformSession>(listed.map((s) => [s.id, s]));
      for (const event of this.recent.since(start)) {
        if (event.environmentId !== env.id) continue;
        const seated = event.session.players.some((p) => p.playerId === playerId);
        if (seated || latest.has(event.session.id)) latest.set(event.session.id, event.session);
      }

      // From here to the end nothing awaits: no event can fall between following and being indexed.
      ws.state = AUTHORIZED;
      ws.second = -1;
      this.pending--;
      this.authorized++;
      this.metrics.connections.set({ state: 'pending' }, this.pending);
      this.metrics.connections.set({ state: 'authorized' }, this.authorized);
      this.indexPlayer(ws);
      this.scheduleExpiry(ws);
      this.send(ws, encodeFrame('authorized', { playerId }, frame.id), 'authorized');
      for (const session of latest.values()) {
        if (!session.players.some((p) => p.playerId === playerId)) continue;
        this.follow(ws, session.id, true);
        this.send(ws, encodeFrame('session', { session }), 'session');
      }
      const queued = ws.queue;
      ws.queue = null;
      for (const next of queued ?? []) if (ws.state === AUTHORIZED) this.dispatch(ws, next);
    } catch (err) {
      this.fault(ws, err, 'authorize failed');
    } finally {
      if (start >= 0) this.recent.end(start);
    }
  }

  /** authorize again on an authorized socket: a fresh token of the same player moves the expiry on. */
  private async reauthorize(ws: HearthSocket, frame: Extract<ClientFrame, { type: 'authorize' }>): Promise<void> {
    try {
      const principal = await this.core.authenticator.authenticate(frame.token, NOT_REMEMBERED);
      if (ws.state !== AUTHORIZED) return;
      const refusal = this.refusalOf(principal);
      if (refusal) {
        this.refuseAuthorization(ws, refusal, frame.id);
        return;
      }
      const player = principal as Extract<Principal, { kind: 'player' }>;
      if (player.playerId !== ws.playerId) {
        this.send(ws, errorFrame('forbidden', 'A socket belongs to one player: open another socket for another player.', undefined, frame.id), 'error');
        return;
      }
      this.expiries.get(ws.exp)?.delete(ws);
      ws.iat = Math.max(ws.iat, player.claims.iat);
      ws.exp = player.claims.exp;
      ws.env = player.environment;
      this.scheduleExpiry(ws);
      this.send(ws, encodeFrame('authorized', { playerId: ws.playerId }, frame.id), 'authorized');
    } catch (err) {
      this.fault(ws, err, 'authorize failed');
    }
  }

  private scheduleExpiry(ws: HearthSocket): void {
    let due = this.expiries.get(ws.exp);
    if (!due) this.expiries.set(ws.exp, (due = new Set()));
    due.add(ws);
  }

  /** Something behind the socket failed (database, Redis): 1011, the client retries with backoff. */
  private fault(ws: HearthSocket, err: unknown, what: string): void {
    this.log.error({ err, playerId: ws.playerId }, what);
    if (ws.state !== CLOSED) this.closeSocket(ws, 1011, 'unavailable');
  }

  // ---- following sessions ------------------------------------------------------------------------

  private follows(ws: HearthSocket, sessionId: string): boolean {
    return (ws.seated?.includes(sessionId) ?? false) || (ws.watched?.includes(sessionId) ?? false);
  }

  /** Follows a session as seated (free) or watched (counted); a watched session the player is seated in becomes seated. */
  private follow(ws: HearthSocket, sessionId: string, seated: boolean): void {
    if (seated) {
      if (ws.seated?.includes(sessionId)) return;
      remove(ws.watched, sessionId);
      (ws.seated ??= []).push(sessionId);
    } else {
      if (this.follows(ws, sessionId)) return;
      (ws.watched ??= []).push(sessionId);
    }
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    set.add(ws);
  }

  private unfollow(ws: HearthSocket, sessionId: string): boolean {
    const was = remove(ws.seated, sessionId) || remove(ws.watched, sessionId);
    if (was) this.unindexSession(ws, sessionId);
    return was;
  }

  private unindexSession(ws: HearthSocket, sessionId: string): void {
    const set = this.bySession.get(sessionId);
    if (!set) return;
    set.delete(ws);
    if (set.size === 0) this.bySession.delete(sessionId);
  }

  private socketsOf(playerId: string): HearthSocket[] {
    const mine = this.byPlayer.get(playerId);
    return mine === undefined ? [] : Array.isArray(mine) ? [...mine] : [mine];
  }

  private indexPlayer(ws: HearthSocket): void {
    const mine = this.byPlayer.get(ws.playerId!);
    if (mine === undefined) this.byPlayer.set(ws.playerId!, ws);
    else if (Array.isArray(mine)) mine.push(ws);
    else this.byPlayer.set(ws.playerId!, [mine, ws]);
  }

  private unindexPlayer(ws: HearthSocket): void {
    const mine = this.byPlayer.get(ws.playerId!);
    if (mine === ws) this.byPlayer.delete(ws.playerId!);
    else if (Array.isArray(mine)) {
      const i = mine.indexOf(ws);
      if (i >= 0) mine.splice(i, 1);
      if (mine.length === 1) this.byPlayer.set(ws.playerId!, mine[0]);
    }
  }

  private async subscribe(ws: HearthSocket, sessionId: string, id?: FrameId): Promise<void> {
    const env = ws.env!;
    const start = this.recent.begin();
    try {
      let session: PlatformSession;
      try {
        session = await this.sessions.get(env, sessionId);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (ws.state === AUTHORIZED) this.send(ws, errorFrame(err.code, err.message, err.details, id), 'error');
        return;
      }
      if (ws.state !== AUTHORIZED) return;
      session = this.recent.newest(start, env.id, sessionId)?.session ?? session;
      const seated = session.players.some((p) => p.playerId === ws.playerId);
      if (!seated && !this.follows(ws, sessionId)) {
        const limit = effectiveLimits(ws.env!.plan.realtime).maxSubscriptions;
        if ((ws.watched?.length ?? 0) >= limit) {
          const message = `A socket may follow ${limit} sessions it holds no seat in; unsubscribe from one first.`;
          this.send(ws, errorFrame('quota-exceeded', message, { quota: 'subscriptions', limit }, id), 'error');
          return;
        }
      }
      this.follow(ws, sessionId, seated);
      this.send(ws, encodeFrame('subscribed', { sessionId, session }, id), 'subscribed');
    } catch (err) {
      this.fault(ws, err, 'subscribe failed');
    } finally {
      this.recent.end(start);
    }
  }

  private unsubscribe(ws: HearthSocket, sessionId: string, id?: FrameId): void {
    if (!this.unfollow(ws, sessionId)) {
      this.send(ws, errorFrame('not-found', 'This socket does not follow that session.', undefined, id), 'error');
    }
  }

  // ---- fan-out -----------------------------------------------------------------------------------

  private onSessionEvent(message: string): void {
    let event: SessionEvent;
    try {
      event = JSON.parse(message) as SessionEvent;
      if (typeof event?.session?.id !== 'string' || !Array.isArray(event.session.players)) throw new Error('not a session event');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'unreadable session event');
      return;
    }
    this.metrics.events.inc();
    this.recent.record(event);
    const { session, environmentId } = event;
    const sessionId = session.id;

    for (const { playerId, reason } of event.removed ?? []) {
      let closed: string | undefined;
      for (const ws of this.socketsOf(playerId)) {
        if (ws.env!.id !== environmentId || !this.unfollow(ws, sessionId)) continue;
        closed ??= encodeFrame('session-closed', { sessionId, reason });
        this.send(ws, closed, 'session-closed');
      }
    }
    for (const playerId of event.added ?? []) {
      for (const ws of this.socketsOf(playerId)) if (ws.env!.id === environmentId) this.follow(ws, sessionId, true);
    }

    const followers = this.bySession.get(sessionId);
    if (followers) {
      // Serialised once for every follower; the same bytes go to each socket.
      const frame = Buffer.from(encodeFrame('session', { session }));
      for (const ws of followers) this.send(ws, frame, 'session');
      // The last-player rule: a lobby in CONFIGURING that nobody holds a seat in is closed (deleted).
      if (session.players.length === 0 && session.status === 'CONFIGURING') {
        const closed = encodeFrame('session-closed', { sessionId, reason: 'deleted' });
        for (const ws of [...followers]) {
          this.unfollow(ws, sessionId);
          this.send(ws, closed, 'session-closed');
        }
      }
    }
    if (typeof event.committedAt === 'number') this.metrics.eventLag.observe(Math.max(0, Date.now() - event.committedAt) / 1000);
  }

  /** Sign-out everywhere and deletion end the player's sockets (their tokens no longer work). */
  private onInvalidation(event: Invalidation): void {
    if (event.kind !== 'player' || event.reason === 'renamed') return;
    const { playerId, reason } = event;
    const socketsNow = () => [...this.socketsOf(playerId), ...[...this.listing].filter((ws) => ws.playerId === playerId)];
    if (socketsNow().length === 0) return;
    // The player's cached state was dropped by this same event: this reads the cut-off as it is now,
    // so a socket authorized with a token issued after the sign-out stays.
    this.core.players
      .state(playerId)
      .then((state) => {
        for (const ws of socketsNow()) {
          if (state && state.environmentId === ws.env!.id && ws.iat >= state.tokensValidAfter) continue;
          this.send(ws, errorFrame('unauthorized', reason === 'deleted' ? 'The player was deleted.' : 'The player was signed out everywhere.'), 'error');
          this.closeSocket(ws, CLOSE.unauthorized, reason);
        }
      })
      .catch((err) => {
        // Cannot tell which tokens are still good: end them all, the client signs in or reconnects.
        this.log.warn({ err: (err as Error).message }, 'player state unavailable; closing the player’s sockets');
        for (const ws of socketsNow()) this.closeSocket(ws, CLOSE.unauthorized, reason);
      });
  }

  // ---- timers shared by every socket -------------------------------------------------------------

  /** Authorize deadlines and token expiries. */
  private tick(now: number): void {
    while (this.awaitingHead < this.awaiting.length) {
      if (this.awaitingDue[this.awaitingHead] > now) break;
      const ws = this.awaiting[this.awaitingHead];
      this.awaiting[this.awaitingHead++] = null;
      if (ws && ws.state === AWAITING) {
        this.send(ws, errorFrame('unauthorized', `No authorize frame within ${this.authorizeTimeoutMs / 1000} s.`), 'error');
        this.closeSocket(ws, CLOSE.unauthorized, 'authorize-timeout');
      }
    }
    if (this.awaitingHead > 1024 && this.awaitingHead * 2 > this.awaiting.length) {
      this.awaiting = this.awaiting.slice(this.awaitingHead);
      this.awaitingDue = this.awaitingDue.slice(this.awaitingHead);
      this.awaitingHead = 0;
    }

    const second = Math.floor(now / 1000);
    for (let s = this.expirySweptTo; s <= second; s++) {
      const due = this.expiries.get(s);
      if (!due) continue;
      this.expiries.delete(s);
      for (const ws of due) {
        this.send(ws, errorFrame('unauthorized', 'The token has expired.'), 'error');
        this.closeSocket(ws, CLOSE.unauthorized, 'token-expired');
      }
    }
    this.expirySweptTo = second;
  }

  /** One slice: drops the sockets that did not answer their last ping (a heartbeat ago), pings the others. */
  private beat(): void {
    const slice = this.slices[this.beatSlice];
    this.beatSlice = (this.beatSlice + 1) % this.slices.length;
    for (const ws of slice) {
      if (!ws.alive) {
        if (ws.closeCode === 0) ws.closeCode = 1006;
        this.forget(ws);
        ws.terminate();
        continue;
      }
      ws.alive = false;
      ws.ping();
    }
  }

  private send(ws: HearthSocket, data: string | Buffer, type: ServerFrameType): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > SLOW_CONSUMER_BYTES) {
      this.closeSocket(ws, CLOSE.policy, 'slow-consumer');
      return;
    }
    ws.send(data, TEXT);
    this.out[type].inc();
  }
}
