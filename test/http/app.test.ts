/**
 * The app around the route table (apps/api/src/http/app.ts, errors.ts): trailing slashes, HEAD, and
 * how whatever a request threw is rendered: an Refusal as the spec's shape (with its headers), a
 * database out of reach as 503, any other fault as a 500 that tells nothing of itself but is logged.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Type } from '@sinclair/typebox';
import { Refusal } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { type ApiServer, defineRoute, startApiServer } from '@hearth/api';
import { INTERNAL_ERROR, answerFor } from '../../apps/api/src/http/errors';
import { type Harness, startHarness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, expectError, signIn } from '../support/http';

const thrower = (path: string, fault: () => unknown) =>
  defineRoute({
    operationId: `testThrow${path.replace(/\W/g, '')}`,
    method: 'GET',
    path,
    summary: 'Throws, for tests',
    tag: 'reference',
    credential: 'none',
    query: Type.Object({}),
    success: { status: 200, description: 'never' },
    refusals: [],
    handler: async () => {
      throw fault();
    },
  });

const routes = [
  thrower('/test/refusal', () => new Refusal('conflict', 'The seat is taken.', { limit: 4 }, { 'Retry-After': '7', 'X-Extra': 'kept' })),
  thrower('/test/fault', () => new Error('boom: secret internals at /srv/app.ts:12')),
  thrower('/test/non-error', () => 'a thrown string'),
  thrower('/test/db-down', () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:5432'), { code: 'ECONNREFUSED' })),
];

let h: Harness;
let api: ApiServer;
let core: HearthCore;
let coordination: RedisCoordination;
let base: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  h = await startHarness();
  // An API whose log lines this test reads.
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  coordination = new RedisCoordination(TEST_REDIS_URL, { prefix: `hearth-test:${randomBytes(6).toString('hex')}:` });
  core = new HearthCore({ db: h.db, coordination, masterKey: h.masterKey, logger: pino({ level: 'info' }, sink) });
  await core.start();
  api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: null, extraRoutes: routes });
  base = `${api.url}/v1`;
});
afterAll(async () => {
  await api.close();
  await core.stop();
  await coordination.close();
  await h.close();
});

describe('trailing slashes make no difference (spec §4)', () => {
  test('on plain paths, paths with parameters, and any number of slashes', async () => {
    const token = h.serverKeys['alpha-live-key'];
    const player = await signIn(base, token, 'slashes-1');
    for (const path of ['/flags', '/flags/', '/flags//', '/flags///']) {
      expect((await call(base, 'GET', path, { token })).status).toBe(200);
    }
    for (const path of [`/players/${player.player.id}`, `/players/${player.player.id}/`, `/players/${player.player.id}//`]) {
      const reply = await call(base, 'GET', path, { token });
      expect(reply.status).toBe(200);
      expect(reply.body.id).toBe(player.player.id);
    }
    // A slash in the middle is not trimmed: another path, unknown.
    expectError(await call(base, 'GET', '//flags', { token }), 404, 'not-found');
    // The query is not part of the path.
    expect((await call(base, 'GET', '/flags/?limit=1', { token })).body.items.length).toBeLessThanOrEqual(1);
  });
});

describe('HEAD answers as GET does, without the body', () => {
  const comparable = (headers: Headers) => {
    const kept: Record<string, string> = {};
    // What differs per request by nature: the date, the request id and the count.
    for (const [name, value] of headers)
      if (!['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'keep-alive', 'connection'].includes(name)) kept[name] = value;
    return kept;
  };

  test.each([
    ['a read', '/flags', 200],
    ['a refusal', '/players/me', 401],
    ['an unknown path', '/nope', 404],
    ['the key set', '/.well-known/jwks.json', 200],
  ])('%s', async (_name, path, status) => {
    const token = path === '/players/me' ? 'hsk_unknown_key' : h.serverKeys['alpha-live-key'];
    const get = await call(base, 'GET', path, { token });
    const head = await call(base, 'HEAD', path, { token });
    expect(get.status).toBe(status);
    expect(head.status).toBe(status);
    expect(head.text).toBe('');
    expect(get.text.length).toBeGreaterThan(0);
    expect(comparable(head.headers)).toEqual(comparable(get.headers));
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(get.text));
  });

  test('a route that is not a GET takes no HEAD', async () => {
    expectError(await call(base, 'GET', '/auth/server'), 404, 'not-found');
    expect((await call(base, 'HEAD', '/auth/server')).status).toBe(404);
  });
});

describe('rendering what a request threw', () => {
  test('an Refusal: its status, the spec shape with its details, and its headers', async () => {
    const reply = await call(base, 'GET', '/test/refusal');
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ error: 'conflict', message: 'The seat is taken.', details: { limit: 4 } });
    expect(reply.headers.get('retry-after')).toBe('7');
    expect(reply.headers.get('x-extra')).toBe('kept');
    expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
  });

  test.each([['/test/fault'], ['/test/non-error']])('a fault (%s): 500 internal-error, nothing of it in the answer, all of it in the log', async (path) => {
    const requestId = `fault-${randomBytes(4).toString('hex')}`;
    const reply = await call(base, 'GET', path, { headers: { 'X-Request-Id': requestId } });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual(INTERNAL_ERROR);
    expect(reply.text).not.toMatch(/boom|secret|srv|string|stack|at .*:\d+/);
    expect(reply.headers.get('x-request-id')).toBe(requestId);
    const logged = logLines.find((l) => l.requestId === requestId && l.msg === 'request failed');
    expect(logged).toEqual(expect.objectContaining({ level: 50, path: `/v1${path}` }));
    if (path === '/test/fault') expect((logged!.err as { stack: string }).stack).toMatch(/boom: secret internals/);
  });

  test('a database out of reach: 503 unavailable, logged as a warning rather than a fault', async () => {
    const requestId = `db-${randomBytes(4).toString('hex')}`;
    const reply = await call(base, 'GET', '/test/db-down', { headers: { 'X-Request-Id': requestId } });
    expectError(reply, 503, 'unavailable');
    expect(reply.text).not.toMatch(/ECONNREFUSED|10\.0\.0\.9/);
    expect(logLines.find((l) => l.requestId === requestId && l.msg === 'request failed')).toEqual(expect.objectContaining({ level: 40 }));
  });

  test('answerFor, directly', () => {
    const refusal = new Refusal('rate-limited', 'Slow down.', { retryAfterSeconds: 3 }, { 'Retry-After': '3' });
    expect(answerFor(refusal)).toEqual({
      status: 429,
      body: { error: 'rate-limited', message: 'Slow down.', details: { retryAfterSeconds: 3 } },
      headers: { 'Retry-After': '3' },
      log: 'none',
    });
    expect(answerFor(new Refusal('not-found', 'No.'))).toEqual({ status: 404, body: { error: 'not-found', message: 'No.' }, headers: undefined, log: 'none' });
    expect(answerFor(Object.assign(new Error('x'), { code: '57P01' }))).toEqual(
      expect.objectContaining({ status: 503, body: expect.objectContaining({ error: 'unavailable' }), log: 'warn' }),
    );
    for (const fault of [new TypeError('x'), 'text', null, undefined, { code: '23505' }]) {
      expect(answerFor(fault)).toEqual({ status: 500, body: INTERNAL_ERROR, log: 'error' });
    }
  });
});
