/**
 * The filing limit (spec §8: support filings 10 per hour per player): requests and reports share it;
 * the eleventh of either kind is 429 with Retry-After to the clock hour's end, stores nothing and is
 * not counted; refused filings count nothing; concurrent filings never pass it; filings of the last
 * hour do not count; and it holds with Redis out of reach (it is counted in PostgreSQL).
 */
import { createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { startApiServer } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { expectError, type Reply } from '../support/http';
import { RedisRelay } from '../support/relay';
import {
  type TestPlayer,
  aRequest,
  awayFromHourEnd,
  fileReport,
  fileRequest,
  filingsOf,
  newPlayer,
  rateHeaders,
  secondsLeftInHour,
  supportManifests,
} from './helpers';

jest.setTimeout(120_000); // may wait out the last minute of an hour

let h: Harness;
let target: TestPlayer;

beforeAll(async () => {
  h = await startHarness({ manifests: supportManifests() });
  target = await newPlayer(h);
});
afterAll(async () => {
  await h.close();
});

beforeEach(async () => {
  await awayFromHourEnd(h);
});

/** Filing number i (0-based) of a mix: requests on even, reports on odd. */
function fileMixed(p: TestPlayer, i: number, base = h.base): Promise<Reply> {
  return i % 2 === 0 ? fileRequest(h, p, aRequest, base) : fileReport(h, p, { playerId: target.id, reason: 'spam' }, base);
}

function expectLimited(reply: Reply, secondsLeft: number) {
  const body = expectError(reply, 429, 'rate-limited');
  const retry = Number(reply.headers.get('retry-after'));
  expect(body.details).toEqual({ retryAfterSeconds: retry });
  // Seconds to the end of the clock hour (the database's clock), give or take the test's own time.
  expect(Math.abs(retry - secondsLeft)).toBeLessThanOrEqual(3);
  expect(rateHeaders(reply)).toEqual({ limit: 10, remaining: 0, reset: retry });
}

test('ten filings of either kind pass, counting down in X-RateLimit-*; the eleventh of either kind is 429 and stores nothing', async () => {
  const p = await newPlayer(h);
  const remaining: number[] = [];
  for (let i = 0; i < 10; i++) {
    const reply = await fileMixed(p, i);
    expect(reply.status).toBe(201);
    const headers = rateHeaders(reply);
    expect(headers.limit).toBe(10);
    remaining.push(headers.remaining);
  }
  expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

  const secondsLeft = await secondsLeftInHour(h);
  expectLimited(await fileRequest(h, p), secondsLeft);
  expectLimited(await fileReport(h, p, { playerId: target.id, reason: 'spam' }), secondsLeft);
  const stored = await filingsOf(h, p.id);
  expect(stored).toHaveLength(10);
  expect(stored.filter((r) => r.kind === 'request')).toHaveLength(5);

  // Refused filings were not counted, and the limit is the player's own: another player files freely.
  expectLimited(await fileRequest(h, p), await secondsLeftInHour(h));
  const other = await newPlayer(h);
  const first = await fileRequest(h, other);
  expect(first.status).toBe(201);
  expect(rateHeaders(first).remaining).toBe(9);
});

test('filings refused for their input (invalid, not-found, oneself) count nothing', async () => {
  const p = await newPlayer(h);
  expectError(await fileRequest(h, p, { subject: 'x', message: aRequest.message }), 400, 'invalid-request', 'body.subject');
  expectError(await fileReport(h, p, { playerId: p.id, reason: 'spam' }), 400, 'invalid-request', 'body.playerId');
  expectError(await fileReport(h, p, { playerId: 'nobody', reason: 'spam' }), 404, 'not-found');
  for (let i = 0; i < 10; i++) expect((await fileMixed(p, i)).status).toBe(201);
  expectError(await fileRequest(h, p), 429, 'rate-limited');
  expect(await filingsOf(h, p.id)).toHaveLength(10);
});

test('twenty filings at once from one player: exactly ten are stored, the other ten are 429', async () => {
  const p = await newPlayer(h);
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => fileMixed(p, i)));
  const statuses = replies.map((r) => r.status).sort();
  expect(statuses).toEqual([...Array(10).fill(201), ...Array(10).fill(429)]);
  expect(await filingsOf(h, p.id)).toHaveLength(10);
  // Each passing filing saw a different count: the lock makes them take turns.
  const seen = replies
    .filter((r) => r.status === 201)
    .map((r) => rateHeaders(r).remaining)
    .sort((a, b) => a - b);
  expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('windows are clock hours: filings of the previous hour do not count, those since :00 do', async () => {
  const lastHour = await newPlayer(h);
  const thisHour = await newPlayer(h);
  const env = (await h.core.environments.byAppKey('alpha-live'))!;
  const backdate = (playerId: string, at: string) =>
    h.db.raw(
      `INSERT INTO support_filings (id, environment_id, kind, player_id, subject, message, created_at)
       SELECT 'old-' || ? || '-' || g, ?, 'request', ?, 'Old one', 'Filed a while ago.', ${at} FROM generate_series(1, 10) g`,
      [playerId, env.id, playerId],
    );
  // One second before this hour began; and the very start of this hour.
  await backdate(lastHour.id, "date_trunc('hour', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 second'");
  await backdate(thisHour.id, "date_trunc('hour', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'");
  const fresh = await fileRequest(h, lastHour);
  expect(fresh.status).toBe(201);
  expect(rateHeaders(fresh).remaining).toBe(9);
  expectError(await fileRequest(h, thisHour), 429, 'rate-limited');
});

test('with Redis out of reach the request limits fail open, and the filing limit still holds', async () => {
  // An API process of its own that reaches Redis through a relay, which is then cut.
  const relay = new RedisRelay();
  await relay.open();
  const coordination = new RedisCoordination(`redis://127.0.0.1:${relay.port}`, { prefix: h.redisPrefix });
  const core = new HearthCore({ db: h.db, coordination, masterKey: h.masterKey, logger: createLogger('silent') });
  await core.start();
  const api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: 0 });
  await relay.cut();
  try {
    const base = `${api.url}/v1`;
    const p = await newPlayer(h);
    for (let i = 0; i < 10; i++) expect((await fileMixed(p, i, base)).status).toBe(201);
    expectLimited(await fileReport(h, p, { playerId: target.id, reason: 'spam' }, base), await secondsLeftInHour(h));
    expect(await filingsOf(h, p.id)).toHaveLength(10);
  } finally {
    await api.close();
    await core.stop();
    await coordination.close();
  }
});
