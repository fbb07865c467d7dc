/**
 * OWASP API Security Top 10 (2023), API4 "Unrestricted resource consumption": what one client can
 * make the API spend, and that every such attempt is answered in the spec's error shape while the
 * process keeps serving with bounded memory.
 *
 * Held elsewhere, and not repeated here:
 * - headers or a URL past node's 16 KiB limit: 400 invalid-request in the spec's shape, then the
 *   connection closed (test/api/client-errors.test.ts);
 * - headers or a Content-Length body sent a trickle at a time: cut by the headers / request
 *   deadlines (test/http/slow-clients.test.ts);
 * - a declared or streamed body over the route's limit: 413 before or while it streams
 *   (test/api/bodies.test.ts), and each limit of each route (test/api/openapi.test.ts);
 * - the rate limits one request at a time (test/api/rate-limits.test.ts).
 * What this file adds: deep nesting, huge strings and arrays inside the limits, the limits held
 * exactly under concurrent bursts, long query strings inside node's limit, many slow chunked bodies
 * at once, and the process's memory across all of it.
 */
import { trickle } from '../support/raw-http';
import { randomBytes } from 'node:crypto';
import { MAX_JSON_DEPTH } from '@hearth/api';
import { type ApiInstance, type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError, signIn, type Reply } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';
import { sleep } from '../support/wait';
import { WindowClock } from '../support/clock';
import { reportFigure } from '../support/figures';

jest.setTimeout(90_000);

/** The tight plan's limits: small enough to exceed with one burst. */
const PER_CREDENTIAL = 25;
const PER_ENVIRONMENT = 40;

/** The APIs' clock: the limits count per clock minute, and a scenario that must stay within one moves it to the next when this one is nearly over. */
const clock = new WindowClock();
let h: Harness;
let server: string;
let playerId: string;
let playerToken: string;
const rssAtStart = process.memoryUsage().rss;
let rssPeak = rssAtStart;
const noteRss = () => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss));

beforeAll(async () => {
  h = await startHarness({
    clock,
    manifests: [
      ...standardManifests(),
      plan('tight', { requestsPerMinutePerCredential: PER_CREDENTIAL, requestsPerMinutePerEnvironment: PER_ENVIRONMENT }),
      project('tight', { plan: 'tight' }),
      environment('tight-live', 'tight'),
      serverKey('tight-key-1', 'tight-live'),
      serverKey('tight-key-2', 'tight-live'),
    ],
  });
  server = h.serverKeys['alpha-live-key'];
  const player = await signIn(h.base, server, 'api4-player', 'Original');
  playerId = player.player.id;
  playerToken = player.accessToken;
});
afterAll(async () => {
  await h.close();
});
afterEach(noteRss);

const json = { 'Content-Type': 'application/json' };
const putSaveRaw = (key: string, raw: string) => call(h.base, 'PUT', `/players/${playerId}/data/${key}`, { token: server, rawBody: raw, headers: json });
const getSave = (key: string) => call(h.base, 'GET', `/players/${playerId}/data/${key}`, { token: server });
const nested = (depth: number, open = '[', close = ']', inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

describe('deep JSON nesting', () => {
  test('100,000 levels of [ in a save (a 200 KB body, inside its 512 KB limit): 400 naming body, nothing written', async () => {
    const reply = await putSaveRaw('deep', `{"data":${nested(100_000)}}`);
    expect(expectError(reply, 400, 'invalid-request', 'body').message).toContain(`${MAX_JSON_DEPTH} levels`);
    expectError(await getSave('deep'), 404, 'not-found');
  });

  test('objects nest the same way: 20,000 levels of {"a": refused', async () => {
    expectError(await putSaveRaw('deep-objects', `{"data":${nested(20_000, '{"a":', '}')}}`), 400, 'invalid-request', 'body');
  });

  test(`exactly ${MAX_JSON_DEPTH} levels (the body's own object included) is stored and read back; one more is refused`, async () => {
    const inside = MAX_JSON_DEPTH - 1; // the body's object is the first level
    const stored = await putSaveRaw('at-limit', `{"data":${nested(inside)}}`);
    expect(stored.status).toBe(201);
    const read = await getSave('at-limit');
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body.data)).toBe(nested(inside));
    expectError(await putSaveRaw('past-limit', `{"data":${nested(inside + 1)}}`), 400, 'invalid-request', 'body');
  });

  test('brackets inside strings are text, not nesting: a save of 100,000 "[" characters and escaped quotes is stored exactly', async () => {
    const text = '['.repeat(50_000) + '\\"{'.repeat(10_000) + '['.repeat(50_000);
    const reply = await putSaveRaw('brackets-in-text', JSON.stringify({ data: { text } }));
    expect(reply.status).toBe(201);
    expect((await getSave('brackets-in-text')).body.data).toEqual({ text });
  });

  test('on a 64 KB route, 100,000 levels is past the limit: 413 before it is parsed', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: playerToken, rawBody: `{"displayName":${nested(100_000)}}`, headers: json });
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
  });

  test('within the 64 KB limit, 30,000 levels where a string is expected: 400, the name kept', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: playerToken, rawBody: `{"displayName":${nested(30_000)}}`, headers: json });
    expectError(reply, 400, 'invalid-request', 'body');
    expect((await call(h.base, 'GET', '/players/me', { token: playerToken })).body.displayName).toBe('Original');
  });
});

describe('huge strings and arrays', () => {
  test('a display name of 60,000 characters (inside the body limit, past maxLength 40): 400 naming body.displayName', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 'x'.repeat(60_000) } });
    expectError(reply, 400, 'invalid-request', 'body.displayName');
    expect((await call(h.base, 'GET', '/players/me', { token: playerToken })).body.displayName).toBe('Original');
  });

  test('a display name of 41 characters: 400; of 40: renamed', async () => {
    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 'y'.repeat(41) } }),
      400,
      'invalid-request',
      'body.displayName',
    );
    expect((await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 'y'.repeat(40) } })).status).toBe(200);
    expect((await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 'Original' } })).status).toBe(200);
  });

  test('a save value of 300 KB (inside the 512 KB body, past the 256 KB value limit) is 400 naming body.data; 200 KB is stored', async () => {
    const refused = await putSaveRaw('big', JSON.stringify({ data: 'z'.repeat(300 * 1024) }));
    expectError(refused, 400, 'invalid-request', 'body.data');
    expectError(await getSave('big'), 404, 'not-found');
    const stored = await putSaveRaw('big', JSON.stringify({ data: 'z'.repeat(200 * 1024) }));
    expect(stored.status).toBe(201);
    expect((await getSave('big')).body.data).toHaveLength(200 * 1024);
  });

  test('an array of 100,000 numbers in a save (inside the limits) is stored and read back whole', async () => {
    const data = Array.from({ length: 100_000 }, (_, i) => i % 10);
    expect((await putSaveRaw('wide', JSON.stringify({ data }))).status).toBe(201);
    expect((await getSave('wide')).body.data).toEqual(data);
  });

  test('a body of 20,000 unknown fields: 400 on the first, not 20,000 checks answered', async () => {
    const body = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`f${i}`, i]));
    const reply = await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 'Original', ...body } });
    expectError(reply, 400, 'invalid-request');
    expect(reply.text.length).toBeLessThan(1_000);
  });

  test('a body past the limit by one byte: 413 (16 KB sign-in)', async () => {
    const limit = 16 * 1024;
    const base = JSON.stringify({ subject: 'x' });
    const raw = base.slice(0, -1) + ' '.repeat(limit - base.length + 1) + '}';
    expect(Buffer.byteLength(raw)).toBe(limit + 1);
    const reply = await call(h.base, 'POST', '/auth/server', { token: server, rawBody: raw, headers: json });
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit });
  });
});

describe("oversized query strings (inside node's 16 KiB header limit; past it: client-errors.test.ts)", () => {
  test('a cursor of 12,000 characters: 400 naming query.cursor', async () => {
    const reply = await call(h.base, 'GET', `/players/${playerId}/data?cursor=${'A'.repeat(12_000)}`, { token: server });
    expectError(reply, 400, 'invalid-request', 'query.cursor');
  });

  test('1,000 unknown query parameters: 400, one line of answer', async () => {
    const query = Array.from({ length: 1_000 }, (_, i) => `p${i}=1`).join('&');
    const reply = await call(h.base, 'GET', `/players/${playerId}/data?${query}`, { token: server });
    expectError(reply, 400, 'invalid-request');
    expect(reply.text.length).toBeLessThan(1_000);
  });

  test('the same parameter 1,000 times: 400, not an array reaching the handler', async () => {
    const query = Array.from({ length: 1_000 }, () => 'limit=1').join('&');
    const reply = await call(h.base, 'GET', `/players/${playerId}/data?${query}`, { token: server });
    expectError(reply, 400, 'invalid-request');
  });

  test('a limit past the page maximum: 400 naming query.limit', async () => {
    expectError(await call(h.base, 'GET', `/players/${playerId}/data?limit=1000000`, { token: server }), 400, 'invalid-request', 'query.limit');
  });
});

function tally(replies: Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

describe('many small requests: the limits hold exactly under concurrent bursts', () => {
  test(`a burst of ${PER_CREDENTIAL + 15} at once on one key: exactly ${PER_CREDENTIAL} served, the rest 429 with Retry-After`, async () => {
    clock.roomInWindow(60, 15);
    const key = h.serverKeys['tight-key-1'];
    const replies = await Promise.all(Array.from({ length: PER_CREDENTIAL + 15 }, () => call(h.base, 'GET', '/flags', { token: key })));
    expect(tally(replies)).toEqual({ 200: PER_CREDENTIAL, 429: 15 });
    for (const r of replies.filter((r) => r.status === 429)) {
      expectError(r, 429, 'rate-limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    // The served ones counted down without a repeat: each remaining value seen once.
    const remaining = replies.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(new Set(remaining).size).toBe(PER_CREDENTIAL);

    // The environment's limit across both keys: the second key gets what is left of 40, exactly.
    const other = h.serverKeys['tight-key-2'];
    const second = await Promise.all(Array.from({ length: 30 }, () => call(h.base, 'GET', '/flags', { token: other })));
    expect(tally(second)).toEqual({ 200: PER_ENVIRONMENT - PER_CREDENTIAL, 429: 30 - (PER_ENVIRONMENT - PER_CREDENTIAL) });
    // Another environment is not touched by the burst.
    expect((await call(h.base, 'GET', '/flags', { token: server })).status).toBe(200);
  });

  test('a burst across two API processes sharing Redis: still exactly the limit', async () => {
    await h.apply([
      plan('tight-2', { requestsPerMinutePerCredential: PER_CREDENTIAL }),
      project('tight2', { plan: 'tight-2' }),
      environment('tight2-live', 'tight2'),
      serverKey('tight2-key', 'tight2-live'),
    ]);
    const other = await h.startAnotherApi();
    clock.roomInWindow(60, 15);
    const key = h.serverKeys['tight2-key'];
    const replies = await Promise.all(Array.from({ length: 2 * PER_CREDENTIAL }, (_, i) => call(i % 2 ? other.base : h.base, 'GET', '/flags', { token: key })));
    expect(tally(replies)).toEqual({ 200: PER_CREDENTIAL, 429: PER_CREDENTIAL });
  });
});

describe('slow chunked bodies, many at once (one at a time: test/http/slow-clients.test.ts)', () => {
  const TIMEOUTS = { headersMs: 600, requestMs: 1_500, checkEveryMs: 100 };
  const SLOW = 100;
  let api: ApiInstance;
  let port: number;

  beforeAll(async () => {
    api = await startApiInstance({
      clock,
      db: h.db,
      redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`,
      masterKey: h.masterKey,
      timeouts: TIMEOUTS,
    });
    port = Number(new URL(api.api.url).port);
  });
  afterAll(async () => {
    await api.stop();
  });

  /** A chunked body that sends one byte-chunk every 100 ms and never ends; resolves with the answer and when it closed. */
  const trickleForever = () =>
    trickle(
      port,
      `POST /v1/auth/server HTTP/1.1\r\nHost: hearth\r\nAuthorization: Bearer ${server}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
      '1\r\n \r\n',
      10_000,
    );

  test(`${SLOW} chunked bodies that trickle forever are each cut at the request deadline, and others are served meanwhile`, async () => {
    const playersBefore = Number((await h.db('players').count({ n: '*' }).first())!.n);
    const slow = Array.from({ length: SLOW }, trickleForever);
    await sleep(300); // wall time: the slow bodies have been trickling a while when the other request comes
    const started = Date.now();
    const meanwhile = await fetch(`${api.base}/flags`, { headers: { Authorization: `Bearer ${server}` } });
    const servedInMs = Date.now() - started;
    expect(meanwhile.status).toBe(200);
    expect(servedInMs).toBeLessThan(1_000);
    const results = await Promise.all(slow);
    const closed = results.map((r) => r.closedAfterMs ?? Infinity);
    reportFigure(
      `api4: ${SLOW} trickling chunked bodies cut after ${Math.min(...closed)}-${Math.max(...closed)} ms (request deadline ${TIMEOUTS.requestMs} ms); another request served in ${servedInMs} ms meanwhile`,
    );
    for (const { answer, closedAfterMs } of results) {
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ error: 'invalid-request', message: 'The request did not arrive in full in time.' });
      expect(closedAfterMs).not.toBeNull();
      expect(closedAfterMs!).toBeGreaterThanOrEqual(TIMEOUTS.requestMs);
      expect(closedAfterMs!).toBeLessThan(TIMEOUTS.requestMs + 3_000);
    }
    // None of them reached its handler: no player was made.
    expect(Number((await h.db('players').count({ n: '*' }).first())!.n)).toBe(playersBefore);
  });
});

test('after all of it the API still answers, and the process grew by less than 300 MB', async () => {
  const me = await call(h.base, 'GET', '/players/me', { token: playerToken });
  expect(me.status).toBe(200);
  expect(me.body.displayName).toBe('Original');
  noteRss();
  const grownMb = (rssPeak - rssAtStart) / 1024 / 1024;
  reportFigure(
    `api4: process RSS ${Math.round(rssAtStart / 1024 / 1024)} MB at start, peak ${Math.round(rssPeak / 1024 / 1024)} MB (+${Math.round(grownMb)} MB)`,
  );
  expect(grownMb).toBeLessThan(300);
});
