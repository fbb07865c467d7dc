/**
 * What the hot path keeps in memory and what it writes per request: a player's answer is cached per
 * process and dropped everywhere on rename, sign-in rename and deletion; every request leaves one
 * access log line (pino JSON) with its request id, and 5xx answers are logged at error.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { applyManifests, validateManifest } from '@hearth/core/manifests';
import { type ApiServer, defineRoute, startApiServer } from '@hearth/api';
import { type ApiInstance, type Harness, type TestDatabase, createTestDatabase, startHarness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, expectError, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';

describe('cached player answers across processes', () => {
  let h: Harness;
  let other: ApiInstance;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    other = await h.startAnotherApi();
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  const nameAt = async (base: string, token: string) => {
    const me = await call(base, 'GET', '/players/me', { token });
    expect(me.status).toBe(200);
    return me.body.displayName as string | null;
  };

  test('a rename in one process is read at once there and soon in a process that had the old name cached', async () => {
    const p = await signIn(h.base, key, 'cache-rename', 'Before');
    expect(await nameAt(other.base, p.accessToken)).toBe('Before'); // now cached by `other`
    expect(await nameAt(h.base, p.accessToken)).toBe('Before'); // and by `h`

    const renamed = await call(h.base, 'PATCH', '/players/me', { token: p.accessToken, body: { displayName: 'After' } });
    expect(renamed.status).toBe(200);
    expect(await nameAt(h.base, p.accessToken)).toBe('After');
    await eventually(async () => (await nameAt(other.base, p.accessToken)) === 'After', 1000);
    // A server key's read by id is the same cached answer.
    const byId = await call(other.base, 'GET', `/players/${p.player.id}`, { token: key });
    expect(byId.body).toEqual({ id: p.player.id, displayName: 'After', createdAt: p.player.createdAt });
  });

  test('a sign-in that changes the display name drops the cached name everywhere; one that does not changes nothing', async () => {
    const p = await signIn(h.base, key, 'cache-signin', 'First');
    expect(await nameAt(other.base, p.accessToken)).toBe('First');
    const again = await signIn(h.base, key, 'cache-signin');
    expect(again.player.displayName).toBe('First');
    const renamed = await signIn(h.base, key, 'cache-signin', 'Second');
    expect(renamed.player).toEqual({ id: p.player.id, displayName: 'Second', createdAt: p.player.createdAt });
    expect(await nameAt(h.base, p.accessToken)).toBe('Second');
    await eventually(async () => (await nameAt(other.base, p.accessToken)) === 'Second', 1000);
  });

  test('a deleted player is gone from every process: the token is refused and the id is not found', async () => {
    const p = await signIn(h.base, key, 'cache-delete', 'Doomed');
    expect(await nameAt(other.base, p.accessToken)).toBe('Doomed');
    expect((await call(other.base, 'GET', `/players/${p.player.id}`, { token: key })).status).toBe(200);

    expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
    expectError(await call(h.base, 'GET', `/players/${p.player.id}`, { token: key }), 404, 'not-found');
    await eventually(async () => (await call(other.base, 'GET', '/players/me', { token: p.accessToken })).status === 401, 1000);
    expectError(await call(other.base, 'GET', `/players/${p.player.id}`, { token: key }), 404, 'not-found');
  });

  // A token sent again is answered from the authenticator's recent principals (each process keeps
  // the principal it made for a token while its environment and player record are unchanged): two
  // reads in a process before the change, so the second was answered from it.
  test('a token answered from the recent principals is refused at once after its player signs out everywhere, there and soon elsewhere', async () => {
    const p = await signIn(h.base, key, 'recent-sign-out', 'Recent');
    for (const base of [h.base, other.base, h.base, other.base]) expect(await nameAt(base, p.accessToken)).toBe('Recent');

    expect((await call(h.base, 'POST', `/players/${p.player.id}/sign-out`, { token: key })).status).toBe(204);
    expectError(await call(h.base, 'GET', '/players/me', { token: p.accessToken }), 401, 'unauthorized');
    await eventually(async () => (await call(other.base, 'GET', '/players/me', { token: p.accessToken })).status === 401, 1000);
    // A token issued after the sign-out is a new principal, and works.
    const again = await signIn(h.base, key, 'recent-sign-out');
    for (const base of [h.base, h.base, other.base]) expect(await nameAt(base, again.accessToken)).toBe('Recent');
  });

  test('a token answered from the recent principals is refused once its player is deleted', async () => {
    const p = await signIn(h.base, key, 'recent-delete', 'Recent');
    for (const base of [h.base, h.base, other.base, other.base]) expect(await nameAt(base, p.accessToken)).toBe('Recent');
    expect((await call(other.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
    expectError(await call(other.base, 'GET', '/players/me', { token: p.accessToken }), 401, 'unauthorized');
    await eventually(async () => (await call(h.base, 'GET', '/players/me', { token: p.accessToken })).status === 401, 1000);
  });

  test('an unknown id read with a server key stays not-found, and a player of another environment is not visible', async () => {
    expectError(await call(other.base, 'GET', '/players/NoSuchPlayer00000000x', { token: key }), 404, 'not-found');
    const elsewhere = await signIn(h.base, h.serverKeys['alpha-test-key'], 'cache-elsewhere', 'Elsewhere');
    expect(await nameAt(other.base, elsewhere.accessToken)).toBe('Elsewhere'); // cached, in alpha-test
    expectError(await call(other.base, 'GET', `/players/${elsewhere.player.id}`, { token: key }), 404, 'not-found');
  });
});

describe('the access log', () => {
  const boom = defineRoute({
    operationId: 'testAccessBoom',
    method: 'GET',
    path: '/test/access-boom',
    summary: 'A handler fault, for tests',
    tag: 'reference',
    credential: 'none',
    success: { status: 200, description: 'never' },
    refusals: [],
    handler: async () => {
      throw new Error('boom');
    },
  });
  let database: TestDatabase;
  let coordination: RedisCoordination;
  let core: HearthCore;
  let api: ApiServer;
  let base: string;
  let key: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    coordination = new RedisCoordination(TEST_REDIS_URL, { prefix: `hearth-test:${randomBytes(6).toString('hex')}:` });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    core = new HearthCore({ db: database.db, coordination, masterKey: randomBytes(32), logger: pino({ level: 'info' }, sink) });
    await core.start();
    const loaded = standardManifests().map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `t#${i}`), origin: `t#${i}` }));
    const results = await applyManifests(database.db, loaded, core.bus);
    key = results.find((r) => r.name === 'alpha-live-key')!.serverKey!.key;
    api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: null, extraRoutes: [boom] });
    base = `${api.url}/v1`;
  });
  afterAll(async () => {
    await api.close();
    await core.stop();
    await coordination.close();
    await database.drop();
  });

  const linesOf = (requestId: string) => lines.filter((l) => l.requestId === requestId);
  const waitForLines = (requestId: string, n: number) => eventually(async () => linesOf(requestId).length >= n, 1000);

  test('one info line per request: request id, method, route template, status and duration', async () => {
    const p = await signIn(base, key, 'logged', 'Logged');
    const reply = await call(base, 'GET', '/players/me', { token: p.accessToken, headers: { 'X-Request-Id': 'access-1' } });
    expect(reply.status).toBe(200);
    await waitForLines('access-1', 1);
    const [line] = linesOf('access-1');
    expect(linesOf('access-1')).toHaveLength(1);
    expect(line).toMatchObject({ level: 30, msg: 'request', requestId: 'access-1', method: 'GET', route: '/players/:playerId', status: 200 });
    expect(typeof line.ms).toBe('number');
    expect(line.ms as number).toBeGreaterThanOrEqual(0);
  });

  test('refusals are logged with their status; a path no route names is `unmatched`', async () => {
    await call(base, 'GET', '/players/me', { headers: { 'X-Request-Id': 'access-401' } });
    await call(base, 'GET', '/no/such/route', { headers: { 'X-Request-Id': 'access-404' } });
    await waitForLines('access-401', 1);
    await waitForLines('access-404', 1);
    expect(linesOf('access-401')).toEqual([expect.objectContaining({ level: 30, route: '/players/:playerId', status: 401 })]);
    expect(linesOf('access-404')).toEqual([expect.objectContaining({ level: 30, route: 'unmatched', status: 404 })]);
  });

  test('a 5xx is logged at error: its cause, and the access line, both with the request id', async () => {
    const reply = await call(base, 'GET', '/test/access-boom', { headers: { 'X-Request-Id': 'access-500' } });
    expect(reply.status).toBe(500);
    await waitForLines('access-500', 2);
    const logged = linesOf('access-500');
    expect(logged).toHaveLength(2);
    expect(logged.every((l) => l.level === 50)).toBe(true);
    expect(logged.find((l) => l.msg === 'request failed')).toMatchObject({ err: expect.objectContaining({ message: 'boom' }) });
    expect(logged.find((l) => l.msg === 'request')).toMatchObject({ route: '/test/access-boom', status: 500, method: 'GET' });
  });

  test('a generated request id is the one answered in X-Request-Id and logged', async () => {
    const reply = await call(base, 'GET', '/no/such/route');
    const id = reply.headers.get('x-request-id')!;
    expect(id).toMatch(/^\S{8,128}$/);
    await waitForLines(id, 1);
    expect(linesOf(id)).toEqual([expect.objectContaining({ status: 404 })]);
  });
});
