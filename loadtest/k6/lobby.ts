/**
 * The lobby lifecycle with the sockets open: two players of the VU each hold a sessions socket (the
 * address from GET /realtime, authorized with their access token), and through the HTTP API the host
 * creates a lobby, the guest joins, both ready (PREPARING_INSTANCE), the game server reports
 * AWAITING_PLAYERS, PLAYING and COMPLETE, both leave, and the session is read back. After every change
 * both sockets must receive the `session` frame showing it (docs/realtime.md), timed from the request
 * that caused it (`session_frame_ms`); a frame that does not come within 5 s is counted in
 * `session_frames_missing`, whose threshold is zero.
 */
import { WebSocket } from 'k6/websockets';
import { Counter, Trend } from 'k6/metrics';
import exec from 'k6/execution';
import { sleep } from 'k6';
import { Player, REALTIME_ORIGIN, SERVER_KEY, call, callAsync, checkTagged, clientAddress, json, signInOrThrow } from './api.ts';

const frameDelay = new Trend('session_frame_ms', true);
const framesMissing = new Counter('session_frames_missing');
const FRAME_TIMEOUT_MS = 5_000;

interface Frame {
  type: string;
  payload: any;
  at: number;
}

/** A sessions socket that keeps the frames it receives until a waiter takes them. */
class SessionSocket {
  private frames: Frame[] = [];
  private waiter: { match: (f: Frame) => boolean; resolve: (f: Frame | undefined) => void; timer: number } | null = null;
  private ws: WebSocket;
  closed = false;

  private constructor(url: string, from: string) {
    this.ws = new WebSocket(url, null, { headers: { 'X-Forwarded-For': from } });
    this.ws.onmessage = (event: any) => {
      let frame: any;
      try {
        frame = JSON.parse(event.data as string);
      } catch {
        frame = { type: 'unparsable', payload: event.data };
      }
      this.push({ type: frame.type, payload: frame.payload, at: Date.now() });
    };
    this.ws.onclose = () => {
      this.closed = true;
      this.push({ type: 'closed', payload: {}, at: Date.now() });
    };
    this.ws.onerror = (event: any) => this.push({ type: 'socket-error', payload: { error: String(event?.error ?? event) }, at: Date.now() });
  }

  /** Opens the socket and authorizes it; resolves once `authorized` arrives (undefined when it does not). */
  static async open(url: string, player: Player, from: string): Promise<SessionSocket | undefined> {
    const socket = new SessionSocket(url, from);
    const opened = await new Promise<boolean>((resolve) => {
      socket.ws.onopen = () => resolve(true);
      socket.waiter = { match: (f) => f.type === 'socket-error' || f.type === 'closed', resolve: () => resolve(false), timer: 0 };
    });
    socket.waiter = null;
    if (!opened) return undefined;
    socket.ws.send(JSON.stringify({ v: 1, type: 'authorize', payload: { token: player.accessToken } }));
    const authorized = await socket.next((f) => f.type === 'authorized' && f.payload?.playerId === player.id);
    return authorized ? socket : undefined;
  }

  private push(frame: Frame): void {
    if (this.waiter && this.waiter.match(frame)) {
      const { resolve, timer } = this.waiter;
      this.waiter = null;
      if (timer) clearTimeout(timer);
      resolve(frame);
      return;
    }
    this.frames.push(frame);
  }

  /** The first frame (kept or coming) that matches, dropping those before it; undefined after 5 s. */
  next(match: (f: Frame) => boolean): Promise<Frame | undefined> {
    const index = this.frames.findIndex(match);
    if (index >= 0) {
      const frame = this.frames[index];
      this.frames.splice(0, index + 1);
      return Promise.resolve(frame);
    }
    this.frames = [];
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve(undefined);
      }, FRAME_TIMEOUT_MS) as unknown as number;
      this.waiter = { match, resolve, timer };
    });
  }

  close(): void {
    if (!this.closed) this.ws.close();
  }
}

/** The VU's two players, signed in on its first iteration and kept (an access token lasts an hour). */
let pair: [Player, Player] | undefined;

/**
 * Waits on every socket for the session frame that shows `expected`, timing each from `sentAt`.
 * A frame missing (or a socket's wrong frame) fails the check and counts.
 */
async function expectFrames(step: string, sockets: SessionSocket[], sessionId: string, sentAt: number, expected: (session: any) => boolean): Promise<void> {
  const frames = await Promise.all(
    sockets.map((s) => s.next((f) => f.type === 'session' && f.payload?.session?.id === sessionId && expected(f.payload.session))),
  );
  for (const frame of frames) {
    if (frame) frameDelay.add(frame.at - sentAt, { step });
    else framesMissing.add(1, { step });
    checkTagged('session-frame', frame, { [`lobby: every socket gets the ${step} frame`]: (f) => f !== undefined });
  }
}

async function lifecycle(host: Player, guest: Player, sockets: SessionSocket[]): Promise<void> {
  let sentAt = Date.now();
  const made = await callAsync('sessions-create', 'POST', 'POST /sessions', '/sessions', {
    token: host.accessToken,
    body: { gameMode: 'duel', map: 'harbour' },
  });
  const session = json(made);
  const created = checkTagged('sessions-create', made, {
    'POST /sessions is 201 CONFIGURING with the host seated': (r) =>
      r.status === 201 && session?.status === 'CONFIGURING' && session.players?.[0]?.playerId === host.id,
  });
  if (!created) return;
  const id: string = session.id;
  const route = (verb: string) => `POST /sessions/:sessionId/${verb}`;

  // Only the host holds a seat yet: only the host's socket follows the lobby.
  await expectFrames('create', [sockets[0]], id, sentAt, (s) => s.status === 'CONFIGURING' && s.players.length === 1);

  sentAt = Date.now();
  const joined = await callAsync('sessions-join', 'POST', route('join'), `/sessions/${id}/join`, { token: guest.accessToken, body: {} });
  checkTagged('sessions-join', joined, { 'POST /sessions/:id/join is 200 with two players': (r) => r.status === 200 && json(r)?.players?.length === 2 });
  await expectFrames('join', sockets, id, sentAt, (s) => s.players.length === 2);

  sentAt = Date.now();
  const hostReady = await callAsync('sessions-ready', 'POST', route('ready'), `/sessions/${id}/ready`, { token: host.accessToken, body: { isReady: true } });
  checkTagged('sessions-ready', hostReady, { 'POST /sessions/:id/ready is 200': (r) => r.status === 200 });
  await expectFrames('ready', sockets, id, sentAt, (s) => s.players.some((p: any) => p.playerId === host.id && p.isReady));

  sentAt = Date.now();
  const guestReady = await callAsync('sessions-ready', 'POST', route('ready'), `/sessions/${id}/ready`, { token: guest.accessToken, body: { isReady: true } });
  checkTagged('sessions-ready', guestReady, {
    'the last ready starts the session (PREPARING_INSTANCE)': (r) => r.status === 200 && json(r)?.status === 'PREPARING_INSTANCE',
  });
  await expectFrames('all-ready', sockets, id, sentAt, (s) => s.status === 'PREPARING_INSTANCE');

  for (const status of ['AWAITING_PLAYERS', 'PLAYING', 'COMPLETE']) {
    sentAt = Date.now();
    const body = status === 'COMPLETE' ? { status, conclusion: 'host won' } : { status };
    const reported = await callAsync('sessions-status', 'POST', route('status'), `/sessions/${id}/status`, { token: SERVER_KEY, body });
    checkTagged('sessions-status', reported, { [`POST /sessions/:id/status ${status} is 200`]: (r) => r.status === 200 && json(r)?.status === status });
    await expectFrames(status.toLowerCase(), sockets, id, sentAt, (s) => s.status === status);
  }

  // Both give up their seats: each socket hears `session-closed left` and stops following.
  for (const [i, player] of [host, guest].entries()) {
    const left = await callAsync('sessions-leave', 'POST', route('leave'), `/sessions/${id}/leave`, { token: player.accessToken });
    checkTagged('sessions-leave', left, { 'POST /sessions/:id/leave is 204': (r) => r.status === 204 });
    const closed = await sockets[i].next((f) => f.type === 'session-closed' && f.payload?.sessionId === id);
    if (!closed) framesMissing.add(1, { step: 'leave' });
    checkTagged('session-frame', closed, { 'lobby: the leaver gets session-closed left': (f) => f?.payload?.reason === 'left' });
  }

  const read = await callAsync('sessions-get', 'GET', 'GET /sessions/:sessionId', `/sessions/${id}`, { token: SERVER_KEY });
  checkTagged('sessions-get', read, {
    'GET /sessions/:id is 200 COMPLETE with nobody seated': (r) => r.status === 200 && json(r)?.status === 'COMPLETE' && json(r)?.players?.length === 0,
  });
}

export async function lobby(lobbiesPerSocket: number): Promise<void> {
  const vu = exec.vu.idInTest;
  if (!pair) {
    pair = [signInOrThrow(SERVER_KEY, `lobby-host-${vu}`), signInOrThrow(SERVER_KEY, `lobby-guest-${vu}`)];
  }
  const [host, guest] = pair;

  // Where the socket is: GET /realtime names it on the API's host; the ingress sends that path to the
  // realtime pods, as the runner's realtime process stands in for them here.
  const info = call('realtime-info', 'GET', 'GET /realtime', '/realtime', { token: host.accessToken });
  const url = json(info)?.url as string | undefined;
  const ok = checkTagged('realtime-info', info, {
    'GET /realtime is 200 with the socket path': (r) => r.status === 200 && /^ws:\/\/[^/]+\/v1\/realtime\/socket$/.test(url ?? ''),
  });
  if (!ok || !url) return;
  const socketUrl = REALTIME_ORIGIN + url.replace(/^wss?:\/\/[^/]+/, '');

  // Each player's device has an address of its own (socket opens are limited per address).
  const sockets: SessionSocket[] = [];
  for (const [i, player] of [host, guest].entries()) {
    const socket = await SessionSocket.open(socketUrl, player, clientAddress(100_000 + 2 * vu + i));
    checkTagged('socket-authorize', socket, { 'the socket opens and authorizes': (s) => s !== undefined });
    if (!socket) {
      sockets.forEach((s) => s.close());
      sleep(1); // not a tight loop of failing opens
      return;
    }
    sockets.push(socket);
  }
  for (let i = 0; i < lobbiesPerSocket; i++) await lifecycle(host, guest, sockets);
  sockets.forEach((s) => s.close());
}
