/**
 * Fan-out across processes: two API processes and two realtime processes over one database and one
 * Redis prefix. A change made through either API reaches every seat on either realtime process.
 */
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { SESSION_EVENTS_CHANNEL, type SessionEvent, type VersionedSession } from '@hearth/core/sessions';
import { coreSessionReader, type SessionReader } from '@hearth/realtime';
import { Client, type Frame, type RealtimeInstance, channelHandled, sleep, startRealtime } from './support';

let h: Harness;
let apiB: ApiInstance;
let rtA: RealtimeInstance;
let rtB: RealtimeInstance;
const clients: Client[] = [];
let n = 0;

interface Player {
  id: string;
  token: string;
  subject: string;
}

/** A new player (a subject not seen before), signed in through API A. */
async function player(name: string, key = 'alpha-live-key'): Promise<Player> {
  const subject = `${name}-${++n}`;
  const t = await signIn(h.base, h.serverKeys[key], subject, name);
  return { id: t.player.id, token: t.accessToken, subject };
}

async function connect(rt: RealtimeInstance, p: Player): Promise<Client> {
  const c = await Client.authorized(rt.url, p.token);
  clients.push(c);
  return c;
}

async function ok(base: string, path: string, token: string, body: unknown = {}, status = 200) {
  const reply = await call(base, 'POST', path, { token, body });
  if (reply.status !== status) throw new Error(`POST ${path}: ${reply.status} ${reply.text}`);
  return reply.body;
}

async function create(base: string, host: Player) {
  return ok(base, '/sessions', host.token, { gameMode: 'duel', map: 'harbour' }, 201);
}

/** The next frame is exactly `session` with this state. */
async function expectSession(c: Client, session: unknown): Promise<void> {
  expect(await c.next()).toEqual({ v: 1, type: 'session', payload: { session } });
}

/**
 * A lobby's creation event travels through Redis and may land just after a subscription made at
 * once: a repeat of the state `subscribed` carried. Waits until the socket's process has handled what
 * was published and the socket has what it was sent, then drops such repeats (only).
 */
async function dropRepeats(rt: RealtimeInstance, c: Client, subscribed: Frame): Promise<void> {
  await channelHandled(rt);
  await c.flushed();
  for (const f of c.frames.splice(0)) expect(f).toEqual({ v: 1, type: 'session', payload: { session: subscribed.payload.session } });
}

beforeAll(async () => {
  h = await startHarness();
  apiB = await h.startAnotherApi();
  rtA = await startRealtime(h, { tickMs: 100 });
  rtB = await startRealtime(h, { tickMs: 100 });
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await rtA?.stop();
  await rtB?.stop();
  await h?.close();
});

test('every change made through either API reaches every seat on either realtime process, once', async () => {
  const host = await player('host');
  const guest = await player('guest');
  const hostSocket = await connect(rtB, host);
  const guestSocket = await connect(rtA, guest);

  const made = await create(h.base, host);
  expect(made.players).toEqual([{ playerId: host.id, playerName: 'host', isHost: true, isReady: false }]);
  await expectSession(hostSocket, made);

  const joined = await ok(apiB.base, `/sessions/${made.id}/join`, guest.token);
  await expectSession(hostSocket, joined);
  await expectSession(guestSocket, joined);

  const guestReady = await ok(h.base, `/sessions/${made.id}/ready`, guest.token, { isReady: true });
  await expectSession(hostSocket, guestReady);
  await expectSession(guestSocket, guestReady);

  const allReady = await ok(apiB.base, `/sessions/${made.id}/ready`, host.token, { isReady: true });
  expect(allReady.status).toBe('PREPARING_INSTANCE');
  await expectSession(hostSocket, allReady);
  await expectSession(guestSocket, allReady);

  const reported = await ok(apiB.base, `/sessions/${made.id}/status`, h.serverKeys['alpha-live-key'], { status: 'PLAYING' });
  await expectSession(hostSocket, reported);
  await expectSession(guestSocket, reported);

  const done = await ok(h.base, `/sessions/${made.id}/status`, h.serverKeys['alpha-live-key'], { status: 'COMPLETE', conclusion: 'host won' });
  expect(done.conclusion).toBe('host won');
  await expectSession(hostSocket, done);
  await expectSession(guestSocket, done);

  await hostSocket.quiet(200);
  await guestSocket.quiet(0);
});

test('an event that arrives after a newer one of its session (as from a slower API process) changes nothing a socket sees', async () => {
  const host = await player('host');
  const guest = await player('guest');
  const hostSocket = await connect(rtA, host);
  const guestSocket = await connect(rtB, guest);
  const made = await create(h.base, host);
  await expectSession(hostSocket, made);
  const joined = await ok(apiB.base, `/sessions/${made.id}/join`, guest.token);
  await expectSession(hostSocket, joined);
  await expectSession(guestSocket, joined);
  const kicked = await ok(h.base, `/sessions/${made.id}/players/${guest.id}/kick`, host.token);
  await expectSession(hostSocket, kicked);
  expect(await guestSocket.next()).toEqual({ v: 1, type: 'session-closed', payload: { sessionId: made.id, reason: 'kicked' } });

  // The join's event again, now late (version 2; the kick made 3): as one published by an API
  // process whose commit was answered after the kick's had already gone out.
  const env = (await h.core.environments.byAppKey('alpha-live'))!;
  const late: SessionEvent = { environmentId: env.id, session: joined, removed: [], added: [guest.id], committedAt: Date.now(), version: 2 };
  await h.core.coordination.publish(SESSION_EVENTS_CHANNEL, JSON.stringify(late));
  await channelHandled(rtA);
  await channelHandled(rtB);
  // Neither the old state nor the kicked player's following again.
  await hostSocket.quiet(200);
  await guestSocket.quiet(0);
  await ok(h.base, `/sessions/${made.id}/ready`, host.token, { isReady: true });
  await hostSocket.waitFor((f) => f.type === 'session' && f.payload.session.status === 'PREPARING_INSTANCE', 'the state after the ready');
  await guestSocket.quiet(200);
});

test('a refused change sends nothing', async () => {
  const host = await player('host');
  const hostSocket = await connect(rtA, host);
  const made = await create(h.base, host);
  await expectSession(hostSocket, made);
  expect((await call(h.base, 'POST', `/sessions/${made.id}/join`, { token: host.token, body: {} })).status).toBe(409);
  expect((await call(apiB.base, 'POST', `/sessions/${made.id}/status`, { token: h.serverKeys['alpha-live-key'], body: { status: 'PLAYING' } })).status).toBe(
    409,
  );
  await hostSocket.quiet(300);
});

test('on authorize a socket follows the sessions its player holds a seat in, and gets their state', async () => {
  const host = await player('host');
  const first = await create(h.base, host);
  const second = await create(apiB.base, host);
  const c = await Client.open(rtB.url);
  clients.push(c);
  c.send({ v: 1, type: 'authorize', payload: { token: host.token } });
  expect(await c.next()).toEqual({ v: 1, type: 'authorized', payload: { playerId: host.id } });
  const states = [await c.next(), await c.next()];
  expect(states.map((f) => f.type)).toEqual(['session', 'session']);
  expect(states.map((f) => f.payload.session).sort((a, b) => a.id.localeCompare(b.id))).toEqual([first, second].sort((a, b) => a.id.localeCompare(b.id)));

  const guest = await player('guest');
  const joined = await ok(h.base, `/sessions/${second.id}/join`, guest.token);
  await expectSession(c, joined);
});

test('every socket of a player follows; leaving gives the leaver session-closed left and the others the session', async () => {
  const host = await player('host');
  const guest = await player('guest');
  const hostSocket = await connect(rtA, host);
  const guestOnA = await connect(rtA, guest);
  const guestOnB = await connect(rtB, guest);
  const made = await create(h.base, host);
  await expectSession(hostSocket, made);
  const joined = await ok(apiB.base, `/sessions/${made.id}/join`, guest.token);
  for (const c of [hostSocket, guestOnA, guestOnB]) await expectSession(c, joined);

  expect((await call(h.base, 'POST', `/sessions/${made.id}/leave`, { token: guest.token })).status).toBe(204);
  const after = (await call(h.base, 'GET', `/sessions/${made.id}`, { token: host.token })).body;
  expect(after.players.map((p: { playerId: string }) => p.playerId)).toEqual([host.id]);
  await expectSession(hostSocket, after);
  for (const c of [guestOnA, guestOnB]) {
    expect(await c.next()).toEqual({ v: 1, type: 'session-closed', payload: { sessionId: made.id, reason: 'left' } });
  }

  // The leaver no longer follows it.
  await ok(h.base, `/sessions/${made.id}/ready`, host.token, { isReady: true });
  await hostSocket.session(made.id);
  await guestOnA.quiet(200);
  await guestOnB.quiet(0);
});

test('a kicked player gets session-closed kicked', async () => {
  const host = await player('host');
  const guest = await player('guest');
  const made = await create(h.base, host);
  await ok(h.base, `/sessions/${made.id}/join`, guest.token);
  const hostSocket = await connect(rtB, host);
  const guestSocket = await connect(rtA, guest);
  await hostSocket.session(made.id);
  await guestSocket.session(made.id);

  const kicked = await ok(apiB.base, `/sessions/${made.id}/players/${guest.id}/kick`, host.token);
  await expectSession(hostSocket, kicked);
  expect(await guestSocket.next()).toEqual({ v: 1, type: 'session-closed', payload: { sessionId: made.id, reason: 'kicked' } });
  await guestSocket.quiet(200);
});

test('subscribe follows any session of the environment; unsubscribe stops; the last player leaving closes it for watchers', async () => {
  const host = await player('host');
  const watcher = await player('watcher');
  const made = await create(h.base, host);
  const w = await connect(rtB, watcher);
  w.send({ v: 1, type: 'subscribe', id: 'sub', payload: { sessionId: made.id } });
  expect(await w.next()).toEqual({ v: 1, type: 'subscribed', id: 'sub', payload: { sessionId: made.id, session: made } });

  const ready = await ok(apiB.base, `/sessions/${made.id}/ready`, host.token, { isReady: false });
  await expectSession(w, ready);

  // Subscribing again answers the state again and follows once.
  w.send({ v: 1, type: 'subscribe', id: 'again', payload: { sessionId: made.id } });
  expect(await w.next()).toEqual({ v: 1, type: 'subscribed', id: 'again', payload: { sessionId: made.id, session: ready } });
  const unchanged = await call(h.base, 'POST', `/sessions/${made.id}/ready`, { token: host.token, body: { isReady: false } });
  expect(unchanged.status).toBe(200);
  await expectSession(w, unchanged.body);
  await w.quiet(200);

  // The last player leaves a lobby: it is closed, and watchers are told.
  expect((await call(h.base, 'POST', `/sessions/${made.id}/leave`, { token: host.token })).status).toBe(204);
  expect(await w.next()).toEqual({ v: 1, type: 'session', payload: { session: { ...ready, players: [] } } });
  expect(await w.next()).toEqual({ v: 1, type: 'session-closed', payload: { sessionId: made.id, reason: 'deleted' } });
  expect((await call(h.base, 'GET', `/sessions/${made.id}`, { token: host.token })).status).toBe(404);

  // unsubscribe: no answer, and no more frames.
  const other = await create(h.base, host);
  w.send({ v: 1, type: 'subscribe', id: 1, payload: { sessionId: other.id } });
  const followed = await w.waitFor((f) => f.type === 'subscribed');
  w.send({ v: 1, type: 'unsubscribe', id: 2, payload: { sessionId: other.id } });
  await dropRepeats(rtB, w, followed);
  await ok(h.base, `/sessions/${other.id}/ready`, host.token, { isReady: true });
  await w.quiet(300);
  w.send({ v: 1, type: 'unsubscribe', id: 3, payload: { sessionId: other.id } });
  expect(await w.next()).toEqual({ v: 1, type: 'error', id: 3, payload: { error: 'not-found', message: expect.any(String) } });
});

test('subscribe to an unknown session or one of another environment is not-found', async () => {
  const foreign = await player('foreign', 'alpha-test-key');
  const theirs = await create(h.base, foreign);
  const me = await player('me');
  const c = await connect(rtA, me);
  c.send({ v: 1, type: 'subscribe', id: 'x', payload: { sessionId: theirs.id } });
  expect(await c.next()).toEqual({
    v: 1,
    type: 'error',
    id: 'x',
    payload: { error: 'not-found', message: expect.any(String), details: { field: 'payload.sessionId' } },
  });
  c.send({ v: 1, type: 'subscribe', id: 'y', payload: { sessionId: 'no-such-session' } });
  // The refusal names the session asked for and the payload's field that held it.
  expect(await c.next()).toEqual({
    v: 1,
    type: 'error',
    id: 'y',
    payload: { error: 'not-found', message: 'The session "no-such-session" was not found in this environment.', details: { field: 'payload.sessionId' } },
  });
  // Changes to the other environment's session never reach this socket.
  await ok(h.base, `/sessions/${theirs.id}/ready`, foreign.token, { isReady: true });
  await c.quiet(300);
});

test('a watcher that takes a seat goes on following it, once', async () => {
  const host = await player('host');
  const guest = await player('guest');
  const made = await create(h.base, host);
  const g = await connect(rtA, guest);
  g.send({ v: 1, type: 'subscribe', payload: { sessionId: made.id } });
  await dropRepeats(rtA, g, await g.waitFor((f) => f.type === 'subscribed'));
  const joined = await ok(apiB.base, `/sessions/${made.id}/join`, guest.token);
  await expectSession(g, joined);
  await g.quiet(200);
});

test('deleting a player closes their sockets with 4401 and the others see the seat gone', async () => {
  const host = await player('host');
  const doomed = await player('doomed');
  const made = await create(h.base, host);
  await ok(h.base, `/sessions/${made.id}/join`, doomed.token);
  const hostSocket = await connect(rtA, host);
  const doomedA = await connect(rtA, doomed);
  const doomedB = await connect(rtB, doomed);
  await hostSocket.session(made.id);

  expect((await call(apiB.base, 'DELETE', `/players/${doomed.id}`, { token: h.serverKeys['alpha-live-key'] })).status).toBe(204);
  for (const c of [doomedA, doomedB]) {
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'deleted' });
    expect(c.seen.some((f) => f.type === 'error' && f.payload.error === 'unauthorized')).toBe(true);
  }
  const seen = await hostSocket.session(made.id);
  expect(seen.payload.session.players.map((p: { playerId: string }) => p.playerId)).toEqual([host.id]);
});

test('sign-out everywhere closes the player’s sockets on every realtime process; a token issued after it still works', async () => {
  const p = await player('leaving');
  const onA = await connect(rtA, p);
  const onB = await connect(rtB, p);
  const bystander = await connect(rtB, await player('bystander'));
  expect((await call(apiB.base, 'POST', '/players/me/sign-out', { token: p.token })).status).toBe(204);
  for (const c of [onA, onB]) {
    const frame: Frame = await c.next();
    expect(frame).toEqual({ v: 1, type: 'error', payload: { error: 'unauthorized', message: expect.any(String) } });
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'signed-out' });
  }
  await bystander.quiet(100);

  // Signed in again after the cut-off: a late or repeated sign-out message leaves this socket open.
  await sleep(1100); // wall time: the cut-off is a token's issue time, in whole seconds of the wall clock
  const fresh = await signIn(h.base, h.serverKeys['alpha-live-key'], p.subject);
  expect(fresh.player.id).toBe(p.id);
  const back = await connect(rtA, { ...p, token: fresh.accessToken });
  await h.core.bus.announce({ kind: 'player', playerId: p.id, reason: 'signed-out' });
  await back.quiet(400);
});

test('an unreadable event on the channel is ignored; events published by anyone reach the seats', async () => {
  const host = await player('host');
  const c = await connect(rtA, host);
  await h.core.coordination.publish('sessions', 'not json');
  await h.core.coordination.publish('sessions', JSON.stringify({ environmentId: 1, session: null }));
  const env = await h.db('environments').where({ app_key: 'alpha-live' }).first('id');
  const session = {
    id: 'published-by-hand',
    status: 'CONFIGURING',
    gameMode: 'g',
    map: 'm',
    conclusion: null,
    seats: 8,
    players: [{ playerId: host.id, playerName: 'host', isHost: true, isReady: false }],
    createdAt: new Date().toISOString(),
  };
  await h.core.coordination.publish(
    'sessions',
    JSON.stringify({ environmentId: Number(env.id), session, removed: [], added: [host.id], committedAt: Date.now() }),
  );
  expect(await c.next()).toEqual({ v: 1, type: 'session', payload: { session } });
  // An event of another environment naming this player does not make the socket follow.
  await h.core.coordination.publish(
    'sessions',
    JSON.stringify({ environmentId: Number(env.id) + 1, session: { ...session, id: 'elsewhere' }, removed: [], added: [host.id], committedAt: Date.now() }),
  );
  await c.quiet(300);
});

/**
 * The real sessions service, with a gate the test opens: a read has been answered by the database but
 * is held before the realtime server gets it, so a change can be committed inside that window.
 */
class GatedReader implements SessionReader {
  private gate: Promise<void> | null = null;
  private open: () => void = () => undefined;
  private readDone: () => void = () => undefined;
  read: Promise<void> = Promise.resolve();
  inner: SessionReader | null = null;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
    this.read = new Promise((resolve) => (this.readDone = resolve));
  }

  release(): void {
    this.gate = null;
    this.open();
  }

  private async held<T>(value: T): Promise<T> {
    this.readDone();
    if (this.gate) await this.gate;
    return value;
  }

  async get(env: EnvironmentContext, sessionId: string): Promise<VersionedSession> {
    return this.held(await this.inner!.get(env, sessionId));
  }

  async listForPlayer(env: EnvironmentContext, playerId: string): Promise<VersionedSession[]> {
    return this.held(await this.inner!.listForPlayer(env, playerId));
  }
}

describe('changes committed while the socket reads a session', () => {
  const reader = new GatedReader();
  let rtGated: RealtimeInstance;
  beforeAll(async () => {
    rtGated = await startRealtime(h, { sessions: reader, tickMs: 100 });
    reader.inner = coreSessionReader(rtGated.core);
  });
  afterAll(async () => {
    reader.release();
    await rtGated?.stop();
  });

  async function authorizeHeld(p: Player): Promise<Client> {
    reader.hold();
    const c = await Client.open(rtGated.url);
    clients.push(c);
    c.send({ v: 1, type: 'authorize', payload: { token: p.token } });
    await reader.read;
    return c;
  }

  test('a join committed while authorize lists the player’s sessions is not missed', async () => {
    const host = await player('host');
    const guest = await player('guest');
    const made = await create(h.base, host);
    const c = await authorizeHeld(host);
    const joined = await ok(apiB.base, `/sessions/${made.id}/join`, guest.token);
    await channelHandled(rtGated); // the event reaches the realtime process while its read is held
    reader.release();
    expect((await c.next()).type).toBe('authorized');
    await expectSession(c, joined);
    await c.quiet(200);
  });

  test('a seat given up while authorize lists the player’s sessions is not followed', async () => {
    const host = await player('host');
    const guest = await player('guest');
    const made = await create(h.base, host);
    await ok(h.base, `/sessions/${made.id}/join`, guest.token);
    const c = await authorizeHeld(guest);
    expect((await call(apiB.base, 'POST', `/sessions/${made.id}/leave`, { token: guest.token })).status).toBe(204);
    await channelHandled(rtGated);
    reader.release();
    expect((await c.next()).type).toBe('authorized');
    await c.quiet(200);
    await ok(h.base, `/sessions/${made.id}/ready`, host.token, { isReady: true });
    await c.quiet(300);
  });

  test('a seat taken elsewhere while authorize lists is followed', async () => {
    const host = await player('host');
    const guest = await player('guest');
    const made = await create(h.base, host);
    const c = await authorizeHeld(guest);
    const joined = await ok(h.base, `/sessions/${made.id}/join`, guest.token);
    await channelHandled(rtGated);
    reader.release();
    expect((await c.next()).type).toBe('authorized');
    await expectSession(c, joined);
  });

  test('a sign-out while authorize lists the player’s sessions closes the socket', async () => {
    const p = await player('quitter');
    const c = await authorizeHeld(p);
    expect((await call(apiB.base, 'POST', '/players/me/sign-out', { token: p.token })).status).toBe(204);
    expect(await c.waitFor((f) => f.type === 'error', 'the error')).toEqual({
      v: 1,
      type: 'error',
      payload: { error: 'unauthorized', message: expect.any(String) },
    });
    reader.release();
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'signed-out' });
    expect(c.seen.map((f) => f.type)).toEqual(['error']);
  });

  test('subscribe answers the state of a change committed while it read the session', async () => {
    const host = await player('host');
    const watcher = await player('watcher');
    const made = await create(h.base, host);
    const c = await connect(rtGated, watcher);
    reader.hold();
    c.send({ v: 1, type: 'subscribe', id: 's', payload: { sessionId: made.id } });
    await reader.read;
    const readied = await ok(apiB.base, `/sessions/${made.id}/ready`, host.token, { isReady: true });
    await channelHandled(rtGated);
    reader.release();
    expect(await c.next()).toEqual({ v: 1, type: 'subscribed', id: 's', payload: { sessionId: made.id, session: readied } });
    await c.quiet(200);
  });
});
