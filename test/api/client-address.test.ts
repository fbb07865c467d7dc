/**
 * The client's address, host and protocol behind the ingress (HEARTH_TRUSTED_PROXIES, proxy-addr).
 * X-Forwarded-For is walked from our peer outwards and believed only as far as trusted proxies vouch
 * for it, so a client that writes its own first entries is still counted under its real address:
 * the per-address limit of requests without a credential (600 a minute) shows whose address was
 * counted, through X-RateLimit-Remaining. X-Forwarded-Host and -Proto count only from a trusted peer;
 * GET /v1/realtime's url shows them. Every test here connects from 127.0.0.1 (loopback).
 */
import { randomBytes } from 'node:crypto';
import { parseTrustedProxies } from '@hearth/core/net';
import { type ApiInstance, type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError, type Reply, signIn } from '../support/http';
import { WindowClock } from '../support/clock';

jest.setTimeout(60_000);

/** The APIs' clock: the limits count per clock minute, and a scenario that must stay within one moves it to the next when this one is nearly over. */
const clock = new WindowClock();
let h: Harness;
let playerToken: string;
const apis: ApiInstance[] = [];

beforeAll(async () => {
  h = await startHarness({ clock });
  playerToken = (await signIn(h.base, h.serverKeys['alpha-live-key'], 'address-1')).accessToken;
});
afterAll(async () => {
  for (const api of apis) await api.stop();
  await h.close();
});

/** An API over the harness's database with its own trust and its own rate-limit counters. */
async function apiTrusting(trust: string): Promise<ApiInstance> {
  const api = await startApiInstance({
    clock,
    db: h.db,
    redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`,
    masterKey: h.masterKey,
    trustedProxies: parseTrustedProxies(trust),
  });
  apis.push(api);
  return api;
}

/** A request without a credential, as the proxies in front of us would pass it on. */
function anonymous(api: ApiInstance, forwardedFor?: string): Promise<Reply> {
  return call(api.base, 'GET', '/.well-known/jwks.json', { headers: forwardedFor === undefined ? {} : { 'X-Forwarded-For': forwardedFor } });
}

function remaining(reply: Reply): number {
  expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
  return Number(reply.headers.get('x-ratelimit-remaining'));
}

async function realtimeUrl(api: ApiInstance, headers: Record<string, string>): Promise<string> {
  const reply = await call(api.base, 'GET', '/realtime', { token: playerToken, headers });
  expect(reply.status).toBe(200);
  return reply.body.url;
}

describe('behind one trusted hop (HEARTH_TRUSTED_PROXIES=1)', () => {
  let api: ApiInstance;
  beforeAll(async () => {
    api = await apiTrusting('1');
  });

  test('the client is the entry our proxy appended: first entries the client wrote change nothing', async () => {
    clock.roomInWindow(60, 15);
    // Our proxy appends the address it saw (203.0.113.7) after whatever the client sent.
    const counted = [
      await anonymous(api, '203.0.113.7'),
      await anonymous(api, '6.6.6.6, 203.0.113.7'),
      await anonymous(api, '1.1.1.1, 2.2.2.2, 203.0.113.7'),
      await anonymous(api, '203.0.113.8, 203.0.113.7'), // pretending to be another client
      await anonymous(api, 'garbage, 203.0.113.7'),
    ].map(remaining);
    expect(counted).toEqual([599, 598, 597, 596, 595]);
    // Another real client has a minute of its own; so does the proxy itself, which is nobody's address.
    expect(remaining(await anonymous(api, '6.6.6.6, 203.0.113.8'))).toBe(599);
    expect(remaining(await anonymous(api))).toBe(599);
  });

  test('a client that used up its minute stays refused whatever first entry it writes', async () => {
    clock.roomInWindow(60, 25);
    const client = '198.51.100.23';
    for (let sent = 0; sent < 600;) {
      const batch = Math.min(50, 600 - sent);
      const replies = await Promise.all(Array.from({ length: batch }, (_, i) => anonymous(api, `10.0.${sent % 250}.${i + 1}, ${client}`)));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      sent += batch;
    }
    for (const spoof of ['9.9.9.9', '198.51.100.24', '127.0.0.1', '::1', '']) {
      const refused = await anonymous(api, spoof ? `${spoof}, ${client}` : client);
      expectError(refused, 429, 'rate-limited');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // Its neighbour is not held to its count.
    expect(remaining(await anonymous(api, `9.9.9.9, 198.51.100.24`))).toBe(599);
  });

  test('X-Forwarded-Host and -Proto of the trusted proxy make the socket URL', async () => {
    expect(await realtimeUrl(api, { 'X-Forwarded-Host': 'play.example.com', 'X-Forwarded-Proto': 'https' })).toBe('wss://play.example.com/v1/realtime/socket');
  });
});

describe('behind a list of proxies (HEARTH_TRUSTED_PROXIES=loopback, 10.0.0.0/8)', () => {
  let api: ApiInstance;
  beforeAll(async () => {
    api = await apiTrusting('loopback, 10.0.0.0/8');
  });

  test('the client is the nearest entry outside the list; what lies beyond it is the client’s own writing', async () => {
    clock.roomInWindow(60, 15);
    // Peer 127.0.0.1 (trusted) ← internal proxy 10.0.0.5 (trusted) ← client 198.51.100.4.
    const counted = [
      await anonymous(api, '198.51.100.4, 10.0.0.5'),
      await anonymous(api, '6.6.6.6, 198.51.100.4, 10.0.0.5'),
      // Claiming to come through one of our proxies does not help either.
      await anonymous(api, '10.9.9.9, 198.51.100.4, 10.0.0.5'),
      await anonymous(api, '127.0.0.1, 198.51.100.4'),
    ].map(remaining);
    expect(counted).toEqual([599, 598, 597, 596]);
    expect(remaining(await anonymous(api, '198.51.100.5, 10.0.0.5'))).toBe(599);
  });

  test('an IPv6 client and a malformed entry: the walk stops at the first address it cannot vouch past', async () => {
    clock.roomInWindow(60, 15);
    expect(remaining(await anonymous(api, '2001:db8::1, 10.0.0.5'))).toBe(599);
    expect(remaining(await anonymous(api, '1.2.3.4, 2001:db8::1'))).toBe(598);
    // proxy-addr treats an entry that is not an address as the client: it counts, under that
    // string, separately from any real client, and gives the sender no one else's minute.
    expect(remaining(await anonymous(api, '2001:db8::1, not-an-address, 10.0.0.5'))).toBe(599);
    expect(remaining(await anonymous(api, '2001:db8::1, 10.0.0.5'))).toBe(597);
  });

  test('X-Forwarded-Host and -Proto count: the peer is on the list', async () => {
    expect(await realtimeUrl(api, { 'X-Forwarded-Host': 'play.example.com', 'X-Forwarded-Proto': 'https' })).toBe('wss://play.example.com/v1/realtime/socket');
  });
});

describe('a peer that is not a trusted proxy (HEARTH_TRUSTED_PROXIES=10.0.0.0/8, we are reached from loopback)', () => {
  let api: ApiInstance;
  beforeAll(async () => {
    api = await apiTrusting('10.0.0.0/8');
  });

  test('its X-Forwarded-For is ignored: every request counts against the peer itself', async () => {
    clock.roomInWindow(60, 15);
    const counted = [
      await anonymous(api),
      await anonymous(api, '203.0.113.7'),
      await anonymous(api, '203.0.113.7, 10.0.0.5'),
      await anonymous(api, '10.0.0.5'),
    ].map(remaining);
    expect(counted).toEqual([599, 598, 597, 596]);
  });

  test('its X-Forwarded-Host and -Proto are ignored: the socket URL is on the Host it reached', async () => {
    const host = new URL(api.base).host;
    expect(await realtimeUrl(api, { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' })).toBe(`ws://${host}/v1/realtime/socket`);
  });
});

test('with no proxy trusted (the default), X-Forwarded-* is ignored too', async () => {
  const api = await apiTrusting('');
  clock.roomInWindow(60, 15);
  expect([await anonymous(api, '203.0.113.7'), await anonymous(api, '203.0.113.9')].map(remaining)).toEqual([599, 598]);
  const host = new URL(api.base).host;
  expect(await realtimeUrl(api, { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' })).toBe(`ws://${host}/v1/realtime/socket`);
});
