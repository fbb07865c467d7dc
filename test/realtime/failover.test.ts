/**
 * A realtime process that dies (kill -9): its clients, following the documented rule (docs/realtime.md,
 * "Reconnecting": on close, re-read GET /realtime and reconnect with backoff, then subscribe again to
 * what they had subscribed to), reconnect through the ingress to the other process, and no seat misses
 * a change made after it reconnected.
 *
 * Real parts: two `hearth realtime` executables over the harness's database and Redis prefix, the
 * harness's API making the changes, and a TCP "ingress" in front of them that sends each connection to
 * the first backend that accepts it (as an ingress whose health checks dropped the dead pod would).
 */
import type { ChildProcess } from 'node:child_process';
import { isDeepStrictEqual as isEqual } from 'node:util';
import WebSocket from 'ws';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { eventually, sleep } from '../support/wait';
import { startRealtimeProcess } from './support';
import { type Ingress, startIngress } from '../support/ingress';

const WITHIN_MS = 10_000;

let h: Harness;
const children: ChildProcess[] = [];
let ingress: Ingress;
const clients: FollowingClient[] = [];

/**
 * A game client following the documented rule: on close, re-read GET /realtime and reconnect with
 * exponential backoff and full jitter (100 ms doubling to 2 s, at most RECONNECT_ATTEMPTS tries in a row);
 * after `authorized`, subscribe again to every session it had subscribed to (seated sessions are
 * followed by the server on its own, and their current state arrives right after `authorized`).
 */
const RECONNECT_ATTEMPTS = 8;

class FollowingClient {
  /** The last state told of each session (by `session`, `subscribed`). */
  readonly sessions = new Map<string, any>();
  /** Every `session` frame's state, in order, with the connection it came on. */
  readonly frames: { connection: number; session: any }[] = [];
  /** Sessions to subscribe to again after every reconnection. */
  private readonly subscriptions = new Set<string>();
  /** Connections authorized so far (1 = the first; 2 = after one reconnection). */
  connection = 0;
  /** Subscriptions answered `subscribed` on the current connection. */
  resubscribed = new Set<string>();
  private ws: WebSocket | null = null;
  private stopped = false;
  private failures = 0;
  gaveUp: Error | null = null;

  constructor(
    readonly name: string,
    private readonly token: string,
  ) {}

  /** Reads GET /realtime, opens the socket through the ingress and authorizes. */
  private async connect(): Promise<void> {
    const info = await call(h.base, 'GET', '/realtime', { token: this.token });
    if (info.status !== 200) throw new Error(`GET /realtime: ${info.status} ${info.text}`);
    // The ingress in front of the realtime pods: the path GET /realtime names, on the ingress's port.
    const url = new URL(info.body.url);
    const ws = new WebSocket(`ws://127.0.0.1:${ingress.port}${url.pathname}`);
    this.ws = ws;
    ws.on('open', () => ws.send(JSON.stringify({ v: 1, type: 'authorize', payload: { token: this.token } })));
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      if (frame.type === 'authorized') {
        this.connection++;
        this.failures = 0;
        this.resubscribed = new Set();
        for (const id of this.subscriptions) ws.send(JSON.stringify({ v: 1, type: 'subscribe', payload: { sessionId: id } }));
      } else if (frame.type === 'session') {
        this.sessions.set(frame.payload.session.id, frame.payload.session);
        this.frames.push({ connection: this.connection, session: frame.payload.session });
      } else if (frame.type === 'subscribed') {
        this.sessions.set(frame.payload.sessionId, frame.payload.session);
        this.resubscribed.add(frame.payload.sessionId);
      }
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      if (this.ws === ws) this.ws = null;
      if (!this.stopped) void this.reconnect();
    });
  }

  private async reconnect(): Promise<void> {
    while (!this.stopped) {
      if (++this.failures > RECONNECT_ATTEMPTS) {
        this.gaveUp = new Error(`${this.name} gave up after ${RECONNECT_ATTEMPTS} attempts`);
        return;
      }
      await sleep(Math.random() * Math.min(2000, 100 * 2 ** (this.failures - 1)));
      if (this.stopped) return;
      try {
        await this.connect();
        return; // a failed open closes the socket, which comes back here
      } catch {
        /* GET /realtime failed: try again after the next backoff */
      }
    }
  }

  async start(): Promise<void> {
    await this.connect();
    await eventually(async () => this.connection === 1, WITHIN_MS);
  }

  subscribe(sessionId: string): void {
    this.subscriptions.add(sessionId);
    this.ws!.send(JSON.stringify({ v: 1, type: 'subscribe', payload: { sessionId } }));
  }

  /** Whether a `session` frame showing `match` arrived on connection `connection` or later. */
  saw(sessionId: string, match: (s: any) => boolean, connection: number): boolean {
    return this.frames.some((f) => f.connection >= connection && f.session.id === sessionId && match(f.session));
  }

  stop(): void {
    this.stopped = true;
    this.ws?.terminate();
  }
}

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  for (const c of clients.splice(0)) c.stop();
  await ingress?.close();
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await h?.close();
});

test('players on a realtime process killed with -9 reconnect to the other, subscribe again, and miss no change made after', async () => {
  const a = await startRealtimeProcess(h, children, WITHIN_MS);
  const b = await startRealtimeProcess(h, children, WITHIN_MS);
  // A first: while it lives, every connection goes there.
  ingress = await startIngress([a.port, b.port]);

  const seated = await Promise.all(['host', 'p2', 'p3', 'p4'].map((name, i) => signIn(h.base, h.serverKeys['alpha-live-key'], `failover-${i}`, name)));
  const watcher = await signIn(h.base, h.serverKeys['alpha-live-key'], 'failover-watcher', 'watcher');
  const seats = seated.map((t, i) => new FollowingClient(`seat ${i + 1}`, t.accessToken));
  const spectator = new FollowingClient('spectator', watcher.accessToken);
  clients.push(...seats, spectator);
  for (const c of clients) await c.start();
  expect(ingress.connectionsTo.get(a.port)).toBe(5);

  // A session with every seat taken; the spectator subscribes to it (not seated: it must subscribe again).
  const made = await call(h.base, 'POST', '/sessions', { token: seated[0].accessToken, body: { gameMode: 'duel', map: 'harbour' } });
  expect(made.status).toBe(201);
  const sessionId: string = made.body.id;
  for (const t of seated.slice(1)) expect((await call(h.base, 'POST', `/sessions/${sessionId}/join`, { token: t.accessToken, body: {} })).status).toBe(200);
  spectator.subscribe(sessionId);
  const full = (s: any) => s.players.length === 4;
  await eventually(
    async () =>
      seats.every((c) => c.saw(sessionId, full, 1)) && spectator.resubscribed.has(sessionId) && spectator.sessions.get(sessionId)?.players.length === 4,
    WITHIN_MS,
  );

  // A dies without a word: its sockets are cut, the ingress sends new connections to B.
  a.child.kill('SIGKILL');
  // A change made while the clients are away: each learns it on reconnecting (the seats from the frames
  // after `authorized`, the spectator from `subscribed`), whether it arrived before or after.
  const hostReady = await call(h.base, 'POST', `/sessions/${sessionId}/ready`, { token: seated[0].accessToken, body: { isReady: true } });
  expect(hostReady.status).toBe(200);

  await eventually(async () => {
    for (const c of clients) if (c.gaveUp) throw c.gaveUp;
    return seats.every((c) => c.connection === 2) && spectator.connection === 2 && spectator.resubscribed.has(sessionId);
  }, WITHIN_MS);
  expect(ingress.connectionsTo.get(b.port)).toBe(5);
  // Every seat's catch-up frame on the new connection is the stored state (the host ready).
  await eventually(async () => seats.every((c) => c.saw(sessionId, (s) => s.players[0].isReady, 2)), WITHIN_MS);
  expect(spectator.sessions.get(sessionId)).toEqual(hostReady.body);

  // Changes made after every client re-subscribed: each reaches every seat and the spectator, none missing.
  const states: any[] = [];
  for (const t of seated.slice(1)) {
    const ready = await call(h.base, 'POST', `/sessions/${sessionId}/ready`, { token: t.accessToken, body: { isReady: true } });
    expect(ready.status).toBe(200);
    states.push(ready.body);
  }
  await eventually(async () => clients.every((c) => states.every((state) => c.frames.some((f) => f.connection === 2 && isEqual(f.session, state)))), WITHIN_MS);
  for (const c of clients) {
    // In order, each once, on the connection to B; and the last state told is the stored one.
    const after = c.frames.filter((f) => f.connection === 2 && states.some((s) => isEqual(s, f.session))).map((f) => f.session);
    expect(after).toEqual(states);
    expect(c.sessions.get(sessionId)).toEqual(states[states.length - 1]);
  }
  const stored = await call(h.base, 'GET', `/sessions/${sessionId}`, { token: seated[0].accessToken });
  expect(stored.body).toEqual(states[states.length - 1]);
  // No client connected anywhere but B after A died (none reached A, none gave up).
  expect(ingress.connectionsTo.get(a.port)).toBe(5);
  for (const c of clients) expect(c.gaveUp).toBeNull();
}, 60_000);
