/**
 * The sessions socket (realtime protocol 1): authorize, subscribe, typed frames, and the reconnect
 * rule of docs/realtime.md "Reconnecting": re-read the socket's address, back off with full jitter,
 * authorize, subscribe again to what was followed.
 */
import { HearthRefusal, type ErrorCode, type ErrorDetails } from './errors';
import type { components } from './generated/openapi';

export type PlatformSession = components['schemas']['PlatformSession'];

/** What the SDK needs of a WebSocket: the browser's, or the `ws` package's in Node. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export type FrameId = string | number;
/** Every frame the server sends. */
export type ServerFrame =
  | { v: 1; type: 'authorized'; id?: FrameId; payload: { playerId: string } }
  | { v: 1; type: 'subscribed'; id?: FrameId; payload: { sessionId: string; session: PlatformSession } }
  | { v: 1; type: 'session'; payload: { session: PlatformSession } }
  | { v: 1; type: 'session-closed'; payload: { sessionId: string; reason: 'left' | 'kicked' | 'deleted' } }
  | { v: 1; type: 'error'; id?: FrameId; payload: { error: ErrorCode; message: string; details?: ErrorDetails } }
  | { v: 1; type: 'pong'; id?: FrameId; payload: Record<string, never> };

export type SocketState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface SocketEvents {
  /** A followed session changed (its whole state), or its state after a reconnect. */
  session: (session: PlatformSession) => void;
  /** The socket stopped following a session: the player left or was kicked, or it was closed. */
  'session-closed': (closed: { sessionId: string; reason: 'left' | 'kicked' | 'deleted' }) => void;
  /** An `error` frame the server sent on its own (one answering a call rejects that call instead). */
  error: (error: HearthRefusal) => void;
  state: (state: SocketState, detail?: { code: number; reason: string }) => void;
}

export interface SocketOptions {
  /** The socket's address now (GET /realtime's `url`), asked again before every reconnect. */
  url: string;
  locate?: () => Promise<string>;
  WebSocket: WebSocketConstructor;
  /** A current access token. */
  token: () => Promise<string>;
  /** A new access token after the server refused one (4401). */
  renew?: () => Promise<boolean>;
  /** Reconnect when the socket drops (default true). */
  reconnect: boolean;
  /** Attempts in a row before giving up (default 10). */
  maxAttempts: number;
  /** Back-off of attempt n: random in [0, min(maxDelayMs, baseDelayMs × 2^(n-1))] (defaults 100 ms, 2 s). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long an answer (authorized, subscribed, pong) may take (default 10 s). */
  answerTimeoutMs: number;
}

/** 4401 reasons after which reconnecting achieves nothing until something else changes. */
const FINAL_REASONS = new Set(['signed-out', 'deleted', 'environment-retired', 'project-not-approved', 'service-disabled']);

interface Waiting {
  resolve: (frame: ServerFrame) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class SessionsSocket {
  private readonly options: SocketOptions;
  private ws?: WebSocketLike;
  private nextId = 1;
  private readonly waiting = new Map<string, Waiting>();
  private readonly followed = new Set<string>();
  private readonly listeners: { [K in keyof SocketEvents]: Set<SocketEvents[K]> } = {
    session: new Set(),
    'session-closed': new Set(),
    error: new Set(),
    state: new Set(),
  };
  private closedByUs = false;
  private attempts = 0;
  private current: SocketState = 'connecting';

  constructor(options: Partial<SocketOptions> & Pick<SocketOptions, 'url' | 'WebSocket' | 'token'>) {
    this.options = { reconnect: true, maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 2000, answerTimeoutMs: 10_000, ...options };
  }

  get state(): SocketState {
    return this.current;
  }

  /** The sessions followed through `subscribe` (seated ones are followed by the server on its own). */
  get subscriptions(): ReadonlySet<string> {
    return this.followed;
  }

  on<K extends keyof SocketEvents>(event: K, listener: SocketEvents[K]): () => void {
    this.listeners[event].add(listener);
    return () => this.listeners[event].delete(listener);
  }

  /** Connects and authorizes (with the reconnect rule's attempts); resolves once `authorized` arrived. */
  async open(): Promise<void> {
    this.setState('connecting');
    await this.establish(this.options.url);
  }

  /** Follows a session: its current state, or a HearthRefusal (`not-found`, `quota-exceeded`). */
  async subscribe(sessionId: string): Promise<PlatformSession> {
    const frame = await this.ask('subscribe', { sessionId });
    if (frame.type !== 'subscribed') throw new Error(`unexpected ${frame.type}`);
    this.followed.add(sessionId);
    return frame.payload.session;
  }

  /** Stops following a session. */
  unsubscribe(sessionId: string): void {
    this.followed.delete(sessionId);
    this.send({ v: 1, type: 'unsubscribe', payload: { sessionId } });
  }

  /** A round trip (`ping` → `pong`). */
  async ping(): Promise<void> {
    await this.ask('ping', {});
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.closedByUs = true;
    this.ws?.close(1000, 'bye');
    this.setState('closed');
  }

  private setState(state: SocketState, detail?: { code: number; reason: string }): void {
    this.current = state;
    for (const listener of this.listeners.state) listener(state, detail);
  }

  private send(frame: object): void {
    if (!this.ws || this.ws.readyState !== 1) throw new Error('the sessions socket is not open');
    this.ws.send(JSON.stringify(frame));
  }

  private ask(type: string, payload: object): Promise<ServerFrame> {
    const id = `c${this.nextId++}`;
    return new Promise<ServerFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no answer to ${type} within ${this.options.answerTimeoutMs} ms`));
      }, this.options.answerTimeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      try {
        this.send({ v: 1, type, id, payload });
      } catch (err) {
        clearTimeout(timer);
        this.waiting.delete(id);
        reject(err as Error);
      }
    });
  }

  /** One connection: resolves when authorized, rejects (with the close) when it closes first. */
  private connect(url: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let authorized = false;
      const ws = new this.options.WebSocket(url);
      this.ws = ws;
      ws.onopen = () => {
        this.options.token().then(
          (token) =>
            this.ask('authorize', { token }).then(
              () => {
                authorized = true;
                resolve();
              },
              () => undefined, // the close that follows a refused authorize says why
            ),
          (err) => {
            reject(err);
            ws.close(1000, 'no token');
          },
        );
      };
      ws.onmessage = (event) => this.receive(event.data);
      ws.onerror = () => undefined; // onclose follows with the code
      ws.onclose = ({ code, reason }) => {
        if (this.ws !== ws) return;
        for (const [id, waiting] of this.waiting) {
          clearTimeout(waiting.timer);
          waiting.reject(new Error(`the sessions socket closed (${code} ${reason})`));
          this.waiting.delete(id);
        }
        if (!authorized) {
          reject(new SocketClosed(code, reason));
          return;
        }
        if (!this.closedByUs) void this.reconnect(code, reason);
      };
    });
  }

  /**
   * Connects until authorized: after a close, a new token if it was 4401, nothing more if its reason is
   * final, else a back-off (random in [0, min(max, base × 2^(n-1))]) and the address asked again.
   * Gives up after `maxAttempts` in a row.
   */
  private async establish(url: string): Promise<void> {
    for (;;) {
      try {
        await this.connect(url);
        this.attempts = 0;
        this.setState('open');
        return;
      } catch (err) {
        const closed = err instanceof SocketClosed ? err : new SocketClosed(1006, (err as Error).message);
        const final = !this.options.reconnect || (closed.code === 4401 && FINAL_REASONS.has(closed.reason));
        const renewed = closed.code !== 4401 || final ? true : await (this.options.renew?.() ?? Promise.resolve(false));
        if (this.closedByUs || final || !renewed || ++this.attempts >= this.options.maxAttempts) {
          this.attempts = 0;
          this.setState('closed', closed);
          throw closed.refusal();
        }
      }
      const ceiling = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (this.attempts - 1));
      await new Promise((r) => setTimeout(r, Math.random() * ceiling));
      url = this.options.locate ? await this.options.locate() : url;
    }
  }

  /** An authorized socket closed on its own: connect again, then follow again what was followed. */
  private async reconnect(code: number, reason: string): Promise<void> {
    if (!this.options.reconnect || (code === 4401 && FINAL_REASONS.has(reason))) {
      this.setState('closed', { code, reason });
      return;
    }
    this.setState('reconnecting', { code, reason });
    try {
      if (code === 4401 && !(await this.options.renew?.())) throw new SocketClosed(code, reason);
      await this.establish(this.options.locate ? await this.options.locate() : this.options.url);
    } catch {
      if (this.current !== 'closed') this.setState('closed', { code, reason });
      return;
    }
    await this.subscribeAgain();
  }

  /** After a reconnect: every session followed through `subscribe` again, its state told as a `session` event. */
  private async subscribeAgain(): Promise<void> {
    for (const sessionId of [...this.followed]) {
      try {
        const session = await this.subscribe(sessionId);
        for (const listener of this.listeners.session) listener(session);
      } catch (err) {
        this.followed.delete(sessionId);
        if (err instanceof HearthRefusal) for (const listener of this.listeners.error) listener(err);
      }
    }
  }

  private receive(data: unknown): void {
    let frame: ServerFrame;
    try {
      frame = JSON.parse(String(data)) as ServerFrame;
    } catch {
      return;
    }
    const id = 'id' in frame && frame.id !== undefined ? String(frame.id) : undefined;
    const waiting = id === undefined ? undefined : this.waiting.get(id);
    if (id !== undefined && waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(id);
      if (frame.type === 'error') waiting.reject(refusalOfFrame(frame.payload));
      else waiting.resolve(frame);
      return;
    }
    switch (frame.type) {
      case 'session':
        for (const listener of this.listeners.session) listener(frame.payload.session);
        break;
      case 'session-closed':
        this.followed.delete(frame.payload.sessionId);
        for (const listener of this.listeners['session-closed']) listener(frame.payload);
        break;
      case 'error':
        for (const listener of this.listeners.error) listener(refusalOfFrame(frame.payload));
        break;
      default:
        break;
    }
  }
}

/** A connection that closed before it was authorized. */
class SocketClosed extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`the sessions socket closed: ${code}${reason ? ` ${reason}` : ''}`);
  }

  refusal(): HearthRefusal {
    return this.code === 4401
      ? new HearthRefusal(401, 'unauthorized', this.message, undefined, null)
      : new HearthRefusal(503, 'unavailable', this.message, undefined, null);
  }
}

function refusalOfFrame(payload: { error: ErrorCode; message: string; details?: ErrorDetails }): HearthRefusal {
  return new HearthRefusal(0, payload.error, payload.message, payload.details, null);
}
