/**
 * One transaction per effect: idempotent test routes whose handlers call the real core services
 * (sessions, players, player deletion) with ctx.db. A fault after the services' writes rolls back the
 * effect, the idempotency record and every announcement with it (session events, cache
 * invalidations); a retry then acts once, and duplicates arriving together act once.
 */
import { Type } from '@sinclair/typebox';
import { INVALIDATION_CHANNEL, RedisCoordination, deletePlayer, type Invalidation, type Unsubscribe } from '@hearth/core';
import { defineRoute } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, expectError } from '../support/http';
import { EventLog, type TestPlayer, join, newPlayer, newSession, sleep, waitForLockWaiters } from '../sessions/helpers';

/**
 * Asks a test route for a fault after its services have written and before it answers. A header, not
 * a body field: the fingerprint leaves headers out, so the retry without it is the same request.
 */
const FAULT = { 'X-Test-Fault': 'after-write' };

/** Holds a handler after its writes (inside its transaction) until the test opens it. */
class Gate {
  private arrive!: () => void;
  private release!: () => void;
  readonly reached = new Promise<void>((resolve) => (this.arrive = resolve));
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));

  async pass(): Promise<void> {
    this.arrive();
    await this.opened;
  }

  open(): void {
    this.release();
  }
}
let gate: Gate | null = null;

/** What every test handler does between its services' writes and its answer. */
async function afterWrites(headers: Record<string, string | string[] | undefined>): Promise<void> {
  if (gate) await gate.pass();
  if (headers['x-test-fault'] === 'after-write') throw new Error('fault after the write');
}

const createSessionRoute = defineRoute({
  operationId: 'testCreateSession',
  method: 'POST',
  path: '/test/sessions',
  summary: 'POST /sessions, idempotent, for tests',
  tag: 'test',
  credential: 'player',
  service: 'sessions',
  idempotency: 'required',
  body: Type.Object({ gameMode: Type.String(), map: Type.String() }, { additionalProperties: false }),
  success: { status: 201, description: 'The session' },
  refusals: [],
  handler: async (ctx) => {
    const session = await ctx.core.sessions.create(ctx.db, ctx.env, ctx.principal.playerId, ctx.body);
    await afterWrites(ctx.headers);
    return { status: 201, body: session };
  },
});

const renameRoute = defineRoute({
  operationId: 'testRename',
  method: 'POST',
  path: '/test/rename',
  summary: 'PATCH /players/me, idempotent, for tests',
  tag: 'test',
  credential: 'player',
  idempotency: 'required',
  body: Type.Object({ displayName: Type.String() }, { additionalProperties: false }),
  success: { status: 200, description: 'The player' },
  refusals: ['not-found'],
  handler: async (ctx) => {
    const player = await ctx.core.players.rename(ctx.db, ctx.env, ctx.principal.playerId, ctx.body.displayName);
    await afterWrites(ctx.headers);
    return { body: player };
  },
});

const deleteRoute = defineRoute({
  operationId: 'testDeletePlayer',
  method: 'POST',
  path: '/test/players/:playerId/delete',
  summary: 'DELETE /players/:playerId, idempotent, for tests',
  tag: 'test',
  credential: 'server',
  idempotency: 'required',
  params: Type.Object({ playerId: Type.String() }),
  success: { status: 204, description: 'Deleted' },
  refusals: ['not-found'],
  handler: async (ctx) => {
    await deletePlayer(ctx.db, ctx.core, ctx.env, ctx.params.playerId);
    await afterWrites(ctx.headers);
    return {};
  },
});

let h: Harness;
let log: EventLog;
let listener: RedisCoordination;
let stopListening: Unsubscribe;
const invalidations: Invalidation[] = [];

beforeAll(async () => {
  h = await startHarness({ extraRoutes: [createSessionRoute, renameRoute, deleteRoute] });
  log = new EventLog(h);
  await log.start();
  // Another process's ear on the invalidation channel.
  listener = new RedisCoordination(TEST_REDIS_URL, { prefix: h.redisPrefix });
  stopListening = await listener.subscribe(INVALIDATION_CHANNEL, (message) => invalidations.push(JSON.parse(message) as Invalidation));
});
// A test that fails while a handler is held must not leave it holding its transaction.
afterEach(() => {
  gate?.open();
  gate = null;
});
afterAll(async () => {
  await stopListening?.();
  await listener?.close();
  await log?.stop();
  await h?.close();
});

function post(path: string, token: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  return call(h.base, 'POST', path, { token, body, headers: { 'Idempotency-Key': key, ...headers } });
}

const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await h.db(table).where(where).count<{ count: string }[]>('* as count'))[0].count);
const recordOf = (key: string) => h.db('idempotency_records').where({ key }).first();
const sessionEventsOf = (p: TestPlayer) => log.events.filter((e) => e.session.players.some((s) => s.playerId === p.id) || e.removed.some((r) => r.playerId === p.id));
const invalidationsOf = (p: TestPlayer) => invalidations.filter((i) => i.kind === 'player' && i.playerId === p.id);

/** Waits (bounded) until `n` invalidations of the player have arrived, then a little longer for strays. */
async function invalidationsSettled(p: TestPlayer, n: number): Promise<Invalidation[]> {
  const deadline = Date.now() + 3000;
  while (invalidationsOf(p).length < n && Date.now() < deadline) await sleep(10);
  await sleep(150);
  return invalidationsOf(p);
}

describe('a core service inside an idempotent route', () => {
  const lobby = { gameMode: 'duel', map: 'harbor' };

  test('a fault after its write answers 500 and leaves no session, no record and no event; the retry acts once', async () => {
    const p = await newPlayer(h);
    const sessionsBefore = await count('sessions');

    expectError(await post('/test/sessions', p.token, 'tx-fault', lobby, FAULT), 500, 'internal-error');
    expect(await count('sessions')).toBe(sessionsBefore);
    expect(await count('session_players', { player_id: p.id })).toBe(0);
    expect(await recordOf('tx-fault')).toBeUndefined();

    const retry = await post('/test/sessions', p.token, 'tx-fault', lobby);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
    expect(retry.body).toMatchObject({ status: 'CONFIGURING', players: [{ playerId: p.id, isHost: true }] });
    // The retry's event arrives; the fault's would have come before it on the same channel.
    await log.exactly(retry.body.id, 1);
    expect(sessionEventsOf(p)).toHaveLength(1);

    const replay = await post('/test/sessions', p.token, 'tx-fault', lobby);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect(await count('sessions')).toBe(sessionsBefore + 1);
    await log.exactly(retry.body.id, 1);
  });

  test('its event goes out only once the transaction has committed', async () => {
    const p = await newPlayer(h);
    gate = new Gate();
    const reply = post('/test/sessions', p.token, 'tx-held', lobby);
    await gate.reached;
    // Written, not committed: nobody outside the transaction sees the seat, and nobody has heard of it.
    await sleep(150);
    expect(await count('session_players', { player_id: p.id })).toBe(0);
    expect(sessionEventsOf(p)).toHaveLength(0);
    gate.open();
    gate = null;

    const created = await reply;
    expect(created.status).toBe(201);
    const [event] = await log.exactly(created.body.id, 1);
    expect(log.seatsWhenArrived(event)).toEqual([p.id]);
  });

  test('two requests at once with one key act once: the second waits for the first and replays its answer', async () => {
    const p = await newPlayer(h);
    gate = new Gate();
    const first = post('/test/sessions', p.token, 'tx-twins', lobby);
    await gate.reached; // the first has written, inside its transaction
    const second = post('/test/sessions', p.token, 'tx-twins', lobby);
    await waitForLockWaiters(h, 1); // the second waits on the first's claim of the key
    gate.open();
    gate = null;

    const replies = await Promise.all([first, second]);
    expect(replies.map((r) => r.status)).toEqual([201, 201]);
    expect(replies[1].body).toEqual(replies[0].body);
    expect(replies.map((r) => r.headers.get('idempotent-replayed')).sort()).toEqual(['false', 'true']);
    expect(await count('session_players', { player_id: p.id })).toBe(1);
    await log.exactly(replies[0].body.id, 1);
  });

  test('a duplicate waiting on a first that faults acts itself, once', async () => {
    const p = await newPlayer(h);
    gate = new Gate();
    const first = post('/test/sessions', p.token, 'tx-fault-twins', lobby, FAULT);
    await gate.reached;
    const second = post('/test/sessions', p.token, 'tx-fault-twins', lobby);
    await waitForLockWaiters(h, 1);
    const held = gate;
    gate = null; // the second passes straight through
    held.open();

    const [faulted, acted] = await Promise.all([first, second]);
    expectError(faulted, 500, 'internal-error');
    expect(acted.status).toBe(201);
    expect(acted.headers.get('idempotent-replayed')).toBe('false');
    expect(await count('session_players', { player_id: p.id })).toBe(1);
    await log.exactly(acted.body.id, 1);
    expect(sessionEventsOf(p)).toHaveLength(1);
  });
});

describe('players inside an idempotent route', () => {
  test('a rename that faults changes no name, in the database or any cache, and is not announced', async () => {
    const p = await newPlayer(h, 'alpha-live-key', 'Before');
    const nameOfMe = async () => (await call(h.base, 'GET', '/players/me', { token: p.token })).body.displayName;
    expect(await nameOfMe()).toBe('Before'); // now cached

    expectError(await post('/test/rename', p.token, 'tx-rename', { displayName: 'After' }, FAULT), 500, 'internal-error');
    expect((await h.db('players').where({ id: p.id }).first()).display_name).toBe('Before');
    expect(await nameOfMe()).toBe('Before');
    expect(await recordOf('tx-rename')).toBeUndefined();

    const retry = await post('/test/rename', p.token, 'tx-rename', { displayName: 'After' });
    expect(retry.status).toBe(200);
    expect(retry.body.displayName).toBe('After');
    expect(await nameOfMe()).toBe('After'); // this process dropped its copy on commit
    expect(await invalidationsSettled(p, 1)).toEqual([{ kind: 'player', playerId: p.id, reason: 'renamed' }]);
  });

  test('a deletion that faults ends no seat and deletes nothing; the retry deletes with its events', async () => {
    const host = await newPlayer(h);
    const p = await newPlayer(h);
    const session = await newSession(h, host);
    expect((await join(h, p, session.id)).status).toBe(200);
    await log.exactly(session.id, 2);
    const { environment_id: envId } = await h.db('players').where({ id: p.id }).first('environment_id');
    const playerCount = async () => Number((await h.db('environments').where({ id: envId }).first('player_count')).player_count);
    const countBefore = await playerCount();
    const server = h.serverKeys['alpha-live-key'];

    expectError(await post(`/test/players/${p.id}/delete`, server, 'tx-delete', undefined, FAULT), 500, 'internal-error');
    expect(await count('players', { id: p.id })).toBe(1);
    expect(await count('session_players', { player_id: p.id })).toBe(1);
    expect(await playerCount()).toBe(countBefore);
    expect(await recordOf('tx-delete')).toBeUndefined();
    expect((await call(h.base, 'GET', '/players/me', { token: p.token })).status).toBe(200);

    const retry = await post(`/test/players/${p.id}/delete`, server, 'tx-delete');
    expect(retry.status).toBe(204);
    expect(await count('players', { id: p.id })).toBe(0);
    expect(await count('session_players', { player_id: p.id })).toBe(0);
    expect(await playerCount()).toBe(countBefore - 1);
    // One event for the ended seat (none for the fault) and one invalidation.
    const events = await log.exactly(session.id, 3);
    expect(events[2]).toMatchObject({ removed: [{ playerId: p.id, reason: 'deleted' }], added: [] });
    expect(await invalidationsSettled(p, 1)).toEqual([{ kind: 'player', playerId: p.id, reason: 'deleted' }]);
    expectError(await call(h.base, 'GET', '/players/me', { token: p.token }), 401, 'unauthorized');

    const replay = await post(`/test/players/${p.id}/delete`, server, 'tx-delete');
    expect(replay.status).toBe(204);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});
