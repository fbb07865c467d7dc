/**
 * The sessions socket (protocol version 1): authorizes sockets with the player's access token, follows
 * the sessions the player holds a seat in (and those it subscribes to), and fans out the session
 * events the API processes publish on SESSION_EVENTS_CHANNEL. docs/realtime.md is the client's view;
 * its "Inside the server" section maps the modules this file wires:
 *   socket.ts              HearthSocket: a socket's state, in fields of the socket object
 *   socket-index.ts        the authorized sockets by player and by followed session
 *   frame-limiter.ts       the plan's frames per second and minute, and frames before authorization
 *   authorize-deadlines.ts the FIFO of sockets that must authorize by a deadline
 *   token-expiries.ts      authorized sockets by the second their token expires
 *   authorization.ts       authorize, authorize again, expiry, sign-out and deletion
 *   fanout.ts              subscribe, unsubscribe, and session events to their followers
 *   session-states.ts      the newest state of each session by version, and what changed during a read
 *   session-reader.ts      what the socket reads of the sessions service (the one adapter to core.sessions)
 *   upgrades.ts            the client's address and the per-address limit on opening sockets
 * This file owns the `ws` server, the life of a connection (open, frames in, frames out, close),
 * the heartbeat and the one tick.
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
import { Refusal, type Logger } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { SESSION_EVENTS_CHANNEL, effectiveLimits } from '@hearth/core/sessions';
import { TRUST_NO_PROXY, withoutTrailingSlashes, type ProxyTrust } from '@hearth/core/net';
import type { RateOutcome, Unsubscribe } from '@hearth/core/coord';
import {
  AUTHORIZE_TIMEOUT_MS,
  CLOSE,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  SLOW_CONSUMER_BYTES,
  SOCKET_PATH,
  encodeFrame,
  errorFrame,
  parseClientFrame,
  type ClientFrame,
  type FrameId,
  type ServerFrameType,
} from './protocol';
import { RealtimeMetrics } from './metrics';
import { SessionStates } from './session-states';
import { AWAITING, AUTHORIZED, AUTHORIZING, CLOSED, HearthSocket, type SocketHost, isAuthorized, isIdentified } from './socket';
import { SocketIndex } from './socket-index';
import { CLOSE_SOCKET, FrameLimiter, PASS, rateLimitedFrame } from './frame-limiter';
import { AuthorizeDeadlines } from './authorize-deadlines';
import { Authorization } from './authorization';
import { Fanout } from './fanout';
import { coreSessionReader, type SessionReader } from './session-reader';
import { UpgradeLimit, originRefusal, rateLimitHeaders, refuseUpgrade, type UpgradeCheck } from './upgrades';

export interface RealtimeServerOptions {
  core: HearthCore;
  /** Defaults to the core's sessions service (coreSessionReader). */
  sessions?: SessionReader;
  metrics?: RealtimeMetrics;
  heartbeatMs?: number;
  authorizeTimeoutMs?: number;
  /** How often authorize deadlines and token expiries are swept (their precision). */
  tickMs?: number;
  /** The path upgrades are taken on (`attach`, `handleUpgrade`). */
  path?: string;
  /** Which hops in front of us may tell the client's address (HEARTH_TRUSTED_PROXIES; default: none). */
  trustedProxies?: ProxyTrust;
  /** Upgrades a minute per client address: the API's limit for requests without a credential unless a test or bench sets another. */
  addressLimitPerMinute?: number;
}

const WS_ERROR_CLOSE_CODES: Record<string, number> = { WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 1009, WS_ERR_INVALID_UTF8: 1007 };
const TEXT = { binary: false };

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** A socket error while an upgrade waits for its rate check: the connection is dropped (one function, no closure). */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

const SHUTTING_DOWN = 'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

function pathOf(url: string | undefined): string {
  return withoutTrailingSlashes((url ?? '/').split('?', 1)[0]);
}

export class RealtimeServer {
  readonly metrics: RealtimeMetrics;
  readonly path: string;
  private readonly core: HearthCore;
  private readonly log: Logger;
  private readonly wss: WebSocketServer;
  private readonly heartbeatMs: number;
  private readonly tickMs: number;

  /** Every open socket, in heartbeat slices: each heartbeat tick pings one slice. */
  private readonly slices: Set<HearthSocket>[];
  private nextSlice = 0;
  private beatSlice = 0;
  private readonly index = new SocketIndex();
  private readonly limiter = new FrameLimiter();
  private readonly deadlines: AuthorizeDeadlines<HearthSocket>;
  private readonly states: SessionStates;
  private readonly authorization: Authorization;
  private readonly fanout: Fanout;
  private readonly upgradeLimit: UpgradeLimit;
  /** The rate outcome of each upgrade in flight, for the X-RateLimit headers of its 101 answer. */
  private readonly upgradeRates = new WeakMap<http.IncomingMessage, RateOutcome>();

  private pending = 0;
  private authorized = 0;
  private running = false;
  private stopping = false;
  private ticker?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private unsubscribeEvents?: Unsubscribe;
  private stopBus?: () => void;
  private stopConnections?: () => void;
  private readonly stopMetrics: () => void;

  private readonly out: Record<ServerFrameType, { inc(n?: number): void }>;
  private readonly upgradeListener: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

  constructor(options: RealtimeServerOptions) {
    this.core = options.core;
    this.metrics = options.metrics ?? new RealtimeMetrics();
    this.stopMetrics = this.metrics.watch({ db: options.core.db, coordination: options.core.coordination });
    this.path = options.path ?? SOCKET_PATH;
    this.log = options.core.logger.child({ component: 'realtime' });
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.tickMs = options.tickMs ?? 1000;
    this.deadlines = new AuthorizeDeadlines(options.authorizeTimeoutMs ?? AUTHORIZE_TIMEOUT_MS);
    // About a second between heartbeat ticks (a short heartbeat, as in tests, is one slice).
    this.slices = Array.from({ length: Math.max(1, Math.round(this.heartbeatMs / 1000)) }, () => new Set<HearthSocket>());

    const host: SocketHost = {
      send: (ws, data, type) => this.send(ws, data, type),
      close: (ws, code, reason) => this.closeSocket(ws, code, reason),
      fault: (ws, err, what) => this.fault(ws, err, what),
    };
    const sessions = options.sessions ?? coreSessionReader(options.core);
    this.states = new SessionStates(options.core.clock);
    const shared = { sessions, index: this.index, states: this.states, host, log: this.log };
    this.authorization = new Authorization({ ...shared, core: options.core, admitted: (ws) => this.admitted(ws) });
    this.fanout = new Fanout({ ...shared, metrics: this.metrics });
    this.upgradeLimit = new UpgradeLimit({
      coordination: options.core.coordination,
      trustedProxies: options.trustedProxies ?? TRUST_NO_PROXY,
      perMinute: options.addressLimitPerMinute,
      metrics: this.metrics,
      log: this.log,
    });

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
    this.wss.on('headers', (headers: string[], req: http.IncomingMessage) => {
      const outcome = this.upgradeRates.get(req);
      if (outcome) for (const [name, value] of Object.entries(rateLimitHeaders(outcome))) headers.push(`${name}: ${value}`);
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
    this.unsubscribeEvents = await this.core.coordination.subscribe(SESSION_EVENTS_CHANNEL, (message) => this.fanout.onSessionEvent(message));
    this.stopBus = this.core.bus.on((event) => this.authorization.onInvalidation(event));
    // Session events published while Redis was away reached no socket here: once the subscription is
    // back, send every followed session's state as it is now (Fanout.catchUp).
    this.stopConnections = this.core.coordination.observeConnections?.((connection, event) => {
      if (connection !== 'subscriber' || event !== 'recovered' || this.stopping) return;
      void this.fanout.catchUp().then((sent) => this.core.logger.info({ frames: sent }, 'session states sent after redis came back'));
    });
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
    return { connections, pending: this.pending, authorized: this.authorized, sessionsFollowed: this.index.sessionsFollowed };
  }

  /** Serves the socket on an existing HTTP server (`hearth dev`: the API's own port). */
  attach(server: http.Server): void {
    server.on('upgrade', this.upgradeListener);
  }

  detach(server: http.Server): void {
    server.off('upgrade', this.upgradeListener);
  }

  /**
   * Takes an upgrade request for this server's path; answers false (touching nothing) for other paths.
   * The upgrade is counted against its client's address first (upgrades.ts): over the limit it is
   * answered 429 and never becomes a socket.
   */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (pathOf(req.url) !== this.path) return false;
    if (!this.ready) {
      socket.end(SHUTTING_DOWN);
      return true;
    }
    void this.upgrade(req, socket, head);
    return true;
  }

  /** Counts the upgrade against its client's address, then upgrades it, or answers 429. */
  private async upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Until ws takes the socket, a reset while the check is in flight must not go unheard.
    socket.on('error', destroyOnError);
    let check: UpgradeCheck;
    try {
      check = await this.upgradeLimit.check(req);
    } catch (err) {
      this.log.error({ err }, 'upgrade failed');
      socket.destroy();
      return;
    } finally {
      socket.off('error', destroyOnError);
    }
    const { address, outcome, refusal } = check;
    if (socket.destroyed) return; // the client went away meanwhile
    if (refusal) {
      this.log.debug({ address }, 'upgrade refused: rate-limited');
      refuseUpgrade(socket, refusal, rateLimitHeaders(outcome));
      return;
    }
    const origin = req.headers.origin;
    const forbidden = originRefusal(origin, this.core.origins.origins);
    if (forbidden) {
      this.metrics.upgradesRefused.inc({ reason: 'origin' });
      this.log.debug({ address, origin }, 'upgrade refused: origin not allowed');
      refuseUpgrade(socket, forbidden, rateLimitHeaders(outcome));
      return;
    }
    if (!this.ready) {
      socket.end(SHUTTING_DOWN);
      return;
    }
    // ws asks for the 101's headers (the 'headers' listener) while handleUpgrade runs.
    this.upgradeRates.set(req, outcome);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws as HearthSocket, address, origin));
    this.upgradeRates.delete(req);
  }

  /**
   * Stops taking sockets, closes every open one with `code` (1012, service restart: the client
   * reconnects, and its new socket lands on another pod) and waits a moment for them.
   */
  async close(code: number = CLOSE.serviceRestart, waitMs = 2000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.stopMetrics();
    clearInterval(this.ticker);
    clearInterval(this.heartbeat);
    this.stopBus?.();
    this.stopConnections?.();
    await this.unsubscribeEvents?.().catch(() => undefined);
    const open = this.slices.flatMap((slice) => [...slice]);
    const closed = open.map((ws) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once('close', () => resolve()))));
    for (const ws of open) this.closeSocket(ws, code, code === CLOSE.serviceRestart ? 'service-restart' : 'going-away');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    for (const ws of open) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
    this.running = false;
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  // ---- connections -------------------------------------------------------------------------------

  private onConnection(ws: HearthSocket, address: string, origin: string | undefined): void {
    ws.address = address;
    if (origin !== undefined) ws.origin = origin;
    ws.slice = this.nextSlice;
    this.nextSlice = (this.nextSlice + 1) % this.slices.length;
    this.slices[ws.slice].add(ws);
    this.deadlines.add(ws, Date.now());
    this.pending++;
    this.metrics.connections.set({ state: 'pending' }, this.pending);
  }

  /** Authorization completed (authorization.ts): count the socket, start its rate windows, handle the frames that waited. */
  private admitted(ws: HearthSocket): void {
    this.limiter.start(ws);
    this.pending--;
    this.authorized++;
    this.metrics.connections.set({ state: 'pending' }, this.pending);
    this.metrics.connections.set({ state: 'authorized' }, this.authorized);
    const queued = ws.queue;
    ws.queue = null;
    for (const next of queued ?? []) if (ws.state === AUTHORIZED) this.dispatch(ws, next);
  }

  private onClosed(ws: HearthSocket, code: number): void {
    this.forget(ws);
    this.metrics.closes.inc({ code: String(ws.closeCode || code) });
    this.log.debug({ address: ws.address, playerId: ws.playerId, code: ws.closeCode || code }, 'socket closed');
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
    this.authorization.forget(ws);
    if (was === AUTHORIZED) {
      this.authorized--;
      this.metrics.connections.set({ state: 'authorized' }, this.authorized);
      // An authorized socket was identified when its authorize was checked.
      if (isIdentified(ws)) this.index.remove(ws);
    } else {
      this.pending--;
      this.metrics.connections.set({ state: 'pending' }, this.pending);
    }
  }

  /** Something behind the socket failed (database, Redis): 1011, the client retries with backoff. */
  private fault(ws: HearthSocket, err: unknown, what: string): void {
    this.log.error({ err, address: ws.address, playerId: ws.playerId }, what);
    if (ws.state !== CLOSED) this.closeSocket(ws, 1011, 'unavailable');
  }

  // ---- frames ------------------------------------------------------------------------------------

  private onFrame(ws: HearthSocket, data: RawData, isBinary: boolean): void {
    if (ws.state === CLOSED) return;
    const limits = isAuthorized(ws) ? effectiveLimits(ws.env.plan.realtime) : null;
    if (limits && byteLength(data) > limits.maxMessageBytes) {
      this.metrics.framesIn.inc({ type: 'too-big' });
      this.closeSocket(ws, CLOSE.tooBig, 'message-too-big');
      return;
    }
    const parsed = isBinary
      ? { error: new Refusal('invalid-request', 'Frames are JSON text, not binary.', { field: 'frame' }) }
      : parseClientFrame(data.toString());
    const id = (parsed as { id?: FrameId }).id;

    if (limits) {
      const verdict = this.limiter.count(ws, limits);
      if (verdict !== PASS) {
        this.metrics.framesIn.inc({ type: 'rate-limited' });
        if (verdict === CLOSE_SOCKET) this.closeSocket(ws, CLOSE.policy, 'rate-limited');
        else this.send(ws, rateLimitedFrame(verdict, id), 'error');
        return;
      }
    } else if (!this.limiter.countEarly(ws)) {
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
      if (frame.type === 'authorize') void this.authorization.authorize(ws, frame);
      else this.authorization.refuse(ws, new Refusal('unauthorized', 'The first frame must be authorize.'), frame.id);
      return;
    }
    if (ws.state === AUTHORIZING) {
      (ws.queue ??= []).push(frame);
      return;
    }
    if (!isAuthorized(ws)) return;
    switch (frame.type) {
      case 'authorize':
        void this.authorization.reauthorize(ws, frame);
        return;
      case 'subscribe':
        void this.fanout.subscribe(ws, frame.sessionId, frame.id);
        return;
      case 'unsubscribe':
        this.fanout.unsubscribe(ws, frame.sessionId, frame.id);
        return;
      case 'ping':
        this.send(ws, encodeFrame('pong', {}, frame.id), 'pong');
        return;
    }
  }

  // ---- timers shared by every socket -------------------------------------------------------------

  /** Authorize deadlines and token expiries. */
  private tick(now: number): void {
    this.deadlines.sweep(now, (ws) => {
      if (ws.state !== AWAITING) return;
      this.send(ws, errorFrame('unauthorized', `No authorize frame within ${this.deadlines.timeoutMs / 1000} s.`), 'error');
      this.closeSocket(ws, CLOSE.unauthorized, 'authorize-timeout');
    });
    this.authorization.sweepExpiries(now);
    // An idle process lets go of the sessions' states too (a reconnect storm reads thousands).
    this.states.sweep();
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
