/**
 * Opening a socket is a request without a credential: it counts against the per-address minute limit
 * the API holds such requests to (spec §8; one counter for both), by the client's address behind the
 * trusted proxies. Over the limit the upgrade is answered 429 with Retry-After and the spec's error
 * body, and no socket is opened. The limit here is 3 a minute (the product's is 600): the counting is
 * the product's own, only the figure is small enough to reach quickly.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { parseTrustedProxies } from '@hearth/core/net';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { eventually } from '../support/wait';
import { Client, type RealtimeInstance, sleep, startRealtime } from './support';
import { RedisRelay } from '../support/relay';

const LIMIT = 3;

let h: Harness;
/** Behind a trusted proxy: every loopback hop is ours. */
let behind: RealtimeInstance;
/** Trusting no proxy: the peer is the client. */
let direct: RealtimeInstance;
const clients: Client[] = [];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** Sends one WebSocket upgrade request and reads the answer: 101 (the socket is dropped at once) or an HTTP error. */
function upgrade(url: string, forwardedFor?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url.replace('ws://', 'http://'), {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...(forwardedFor === undefined ? {} : { 'X-Forwarded-For': forwardedFor }),
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, headers: res.headers, body: null });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
  });
}

function expectOpened(answer: Answer, remaining: number, limit = LIMIT): void {
  expect(answer.status).toBe(101);
  expect(answer.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(answer.headers['x-ratelimit-remaining']).toBe(String(remaining));
}

function expectRefused(answer: Answer, limit = LIMIT): void {
  expect(answer.status).toBe(429);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.body).toEqual({ error: 'rate-limited', message: expect.any(String), details: { retryAfterSeconds: expect.any(Number) } });
  const retry = (answer.body as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds;
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
  expect(answer.headers['retry-after']).toBe(String(retry));
  expect(answer.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(answer.headers['x-ratelimit-remaining']).toBe('0');
}

/** Windows are clock minutes: a test that must stay inside one waits for the next when this one is nearly over. */
async function roomInMinute(margin = 10): Promise<void> {
  const secondsLeft = 60 - ((Date.now() / 1000) % 60);
  if (secondsLeft < margin) await sleep(secondsLeft * 1000 + 100); // wall time: the limits count per clock minute, in Redis
}

beforeAll(async () => {
  h = await startHarness({ trustedProxies: parseTrustedProxies('loopback') });
  behind = await startRealtime(h, { trustedProxies: parseTrustedProxies('loopback'), addressLimitPerMinute: LIMIT, tickMs: 100 });
  direct = await startRealtime(h, { addressLimitPerMinute: LIMIT, tickMs: 100 });
});

beforeEach(async () => {
  await roomInMinute();
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await behind?.stop();
  await direct?.stop();
  await h?.close();
});

test('behind a trusted proxy the limit is per real client: its 4th upgrade in a minute is refused with 429; another client goes on', async () => {
  for (let i = 0; i < LIMIT; i++) expectOpened(await upgrade(behind.url, '203.0.113.1'), LIMIT - 1 - i);
  expectRefused(await upgrade(behind.url, '203.0.113.1'));
  // Refused before upgrading: still refused (the refusal was not counted, the window is the same).
  expectRefused(await upgrade(behind.url, '203.0.113.1'));
  // Another client behind the same proxy has a limit of its own, and a refused client's socket would work otherwise.
  expectOpened(await upgrade(behind.url, '203.0.113.2'), LIMIT - 1);
  const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'addresses-1');
  const c = await Client.open(behind.url, { headers: { 'X-Forwarded-For': '203.0.113.2' } });
  clients.push(c);
  c.send({ v: 1, type: 'authorize', payload: { token: t.accessToken } });
  expect((await c.next()).type).toBe('authorized');

  const metrics = await (await fetch(behind.metricsUrl!)).text();
  expect(metrics).toMatch(/hearth_realtime_upgrades_refused_total\{reason="rate-limited"\} 2\n/);
  expect(metrics).toMatch(/hearth_realtime_connections\{state="authorized"\} 1\n/);
});

test('a forwarded chain is walked back to the first address no trusted hop vouches for', async () => {
  // The client 203.0.113.3, reaching us through one or two proxies of ours (loopback), or naming hops of its own.
  expectOpened(await upgrade(behind.url, '203.0.113.3'), 2);
  expectOpened(await upgrade(behind.url, '203.0.113.3, 127.0.0.5'), 1);
  expectOpened(await upgrade(behind.url, '10.1.2.3, 203.0.113.3, 127.0.0.6'), 0);
  expectRefused(await upgrade(behind.url, '203.0.113.3, 127.0.0.7'));
});

test('a spoofed first X-Forwarded-For entry does not get a fresh limit', async () => {
  // What the client wrote comes first; our proxy appends the address it saw: that one counts.
  for (let i = 0; i < LIMIT; i++) expectOpened(await upgrade(behind.url, `198.51.100.${i + 1}, 203.0.113.4`), LIMIT - 1 - i);
  expectRefused(await upgrade(behind.url, '198.51.100.99, 203.0.113.4'));
  expectRefused(await upgrade(behind.url, '203.0.113.200, 203.0.113.4'));
});

test('an untrusted peer’s X-Forwarded-For is ignored: the peer’s own address counts', async () => {
  for (let i = 0; i < LIMIT; i++) expectOpened(await upgrade(direct.url, `203.0.113.${10 + i}`), LIMIT - 1 - i);
  expectRefused(await upgrade(direct.url, '203.0.113.50'));
  expectRefused(await upgrade(direct.url));
  // The refusal is an answer before any socket: the socket's own close codes are not involved.
  await expect(Client.open(direct.url)).rejects.toThrow(/429/);
});

test('upgrades and the API’s requests without a credential count against one counter', async () => {
  const address = '203.0.113.20';
  for (let i = 0; i < 2; i++) {
    const reply = await call(h.base, 'GET', '/no-such-route', { headers: { 'X-Forwarded-For': address } });
    expect(reply.status).toBe(404);
  }
  expectOpened(await upgrade(behind.url, address), 0);
  expectRefused(await upgrade(behind.url, address));
});

describe('with Redis out of reach', () => {
  test('upgrades fail open, at once, and a metric says so', async () => {
    const relay = new RedisRelay();
    await relay.open();
    const rt = await startRealtime(h, {
      redisUrl: `redis://127.0.0.1:${relay.port}`,
      trustedProxies: parseTrustedProxies('loopback'),
      addressLimitPerMinute: 1,
      tickMs: 100,
    });
    try {
      expectOpened(await upgrade(rt.url, '203.0.113.30'), 0, 1);
      expectRefused(await upgrade(rt.url, '203.0.113.30'), 1);
      await relay.cut();
      const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'addresses-redis-down');
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const c = await Client.open(rt.url, { headers: { 'X-Forwarded-For': '203.0.113.30' } });
        clients.push(c);
        expect(Date.now() - started).toBeLessThan(500);
        c.send({ v: 1, type: 'authorize', payload: { token: t.accessToken } });
        expect((await c.next()).type).toBe('authorized');
      }
      const metrics = await (await fetch(rt.metricsUrl!)).text();
      expect(metrics).toMatch(/hearth_realtime_rate_limit_fail_open_total 3\n/);

      // Back: the limit holds again.
      await relay.open(relay.port);
      await eventually(() => rt.core.coordination.ping(), 10_000, 100);
      expectRefused(await upgrade(rt.url, '203.0.113.30'), 1);
    } finally {
      for (const c of clients.splice(0)) c.close();
      await rt.stop();
      await relay.cut().catch(() => undefined);
    }
  });
});
