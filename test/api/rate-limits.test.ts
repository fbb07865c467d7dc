/**
 * Request rate limits (spec §8, docs/api-conventions.md): fixed clock windows per credential, per environment per
 * minute and per day, per address for requests without a good credential; X-RateLimit-* on every
 * answer; a refused request is not counted; Redis out of reach fails open. Each scenario gets a harness
 * of its own (its own Redis prefix), with a plan of small numbers.
 */
import net from 'node:net';
import Redis from 'ioredis';
import { createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import type { PlanLimits } from '@hearth/core/contract';
import { RedisCoordination } from '@hearth/core/coord';
import { type ApiServer, startApiServer } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, type Reply, signIn } from '../support/http';
import { plan, serverKey, standardManifests } from '../support/manifests';
import { TEST_REDIS_URL } from '../support/env';
import { eventually } from '../support/wait';
import { WindowClock } from '../support/clock';
import { RedisRelay } from '../support/relay';

jest.setTimeout(60_000);

/**
 * The API's clock: the windows it counts in. A scenario must not straddle two clock minutes, so when
 * fewer than `margin` seconds are left in this one, the clock moves to the next (test/support/clock.ts).
 */
let clock: WindowClock;
function roomInMinute(margin = 10): void {
  clock.roomInWindow(60, margin);
}

function secondsToNextMinute(): number {
  return 60 - (Math.floor(clock.now() / 1000) % 60);
}

function secondsToUtcMidnight(): number {
  const now = Math.floor(clock.now() / 1000);
  return 86_400 - (now % 86_400);
}

/**
 * Sends a request and reads `left` (the seconds left in a window, on the API's clock) just before and
 * just after: the API read its clock in between, so the seconds it answers lie in that range, however
 * slow the machine. `expectLeft` holds a header or a Retry-After to it.
 */
async function sendTimed(left: () => number, send: () => Promise<Reply>) {
  const most = left();
  const reply = await send();
  const least = left();
  const expectLeft = (seconds: number) => {
    expect(seconds).toBeGreaterThanOrEqual(least);
    expect(seconds).toBeLessThanOrEqual(most);
  };
  return { reply, expectLeft };
}

function limits(reply: Reply) {
  return {
    limit: Number(reply.headers.get('x-ratelimit-limit')),
    remaining: Number(reply.headers.get('x-ratelimit-remaining')),
    reset: Number(reply.headers.get('x-ratelimit-reset')),
  };
}

/** Asserts a 429 in the spec's shape: Retry-After equal to details.retryAfterSeconds. */
function expectRateLimited(reply: Reply): number {
  const body = expectError(reply, 429, 'rate-limited');
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(body.details).toEqual({ retryAfterSeconds: retryAfter });
  expect(limits(reply).remaining).toBe(0);
  return retryAfter;
}

async function harnessWith(plan: Partial<PlanLimits>): Promise<Harness> {
  clock = new WindowClock(); // a scenario's own: it moves only as far as its scenario needs
  const h = await startHarness({ clock, manifests: [...standardManifests(plan), serverKey('alpha-live-key-2', 'alpha-live')] });
  return h;
}

const flags = (h: Harness, token: string) => call(h.base, 'GET', '/flags', { token });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

test('per credential per clock minute: the 6th request of a key allowed 5 is 429, and headers count down', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5 });
  const keyA = h.serverKeys['alpha-live-key'];
  const keyB = h.serverKeys['alpha-live-key-2'];
  roomInMinute();

  const seen: number[] = [];
  for (let i = 0; i < 5; i++) {
    const { reply, expectLeft } = await sendTimed(secondsToNextMinute, () => flags(h!, keyA));
    expect(reply.status).toBe(200);
    const l = limits(reply);
    expect(l.limit).toBe(5);
    seen.push(l.remaining);
    expect(l.reset).toBeGreaterThanOrEqual(1);
    expect(l.reset).toBeLessThanOrEqual(60);
    expectLeft(l.reset);
  }
  expect(seen).toEqual([4, 3, 2, 1, 0]);

  const { reply: refused, expectLeft } = await sendTimed(secondsToNextMinute, () => flags(h!, keyA));
  const retryAfter = expectRateLimited(refused);
  expect(limits(refused).limit).toBe(5);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expectLeft(retryAfter);
  // Every route is held to it, whatever it would have answered.
  expectRateLimited(await call(h.base, 'GET', '/players/nobody', { token: keyA }));
  expectRateLimited(await call(h.base, 'POST', '/auth/server', { token: keyA, body: { subject: 'late' } }));
  expect(await h.db('player_identities').where({ subject: 'late' }).first()).toBeUndefined();

  // Another credential of the same environment has its own count.
  const other = await flags(h, keyB);
  expect(other.status).toBe(200);
  expect(limits(other)).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));
});

test("a plan's new limits apply to a credential already counted (the API keeps each credential's checks only while its environment is unchanged)", async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5 });
  const key = h.serverKeys['alpha-live-key'];
  roomInMinute(25);
  expect(limits(await flags(h, key))).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));

  await h.apply([plan('test', { requestsPerMinutePerCredential: 8 })]);
  // The environment is read again on the change (or within its 10 s refresh); the same count carries on under the new limit.
  let seen = limits(await flags(h, key));
  if (seen.limit !== 8) await eventually(async () => (seen = limits(await flags(h!, key))).limit === 8, 10_000, 250).catch(() => undefined); // the assertion below says what was seen
  expect(seen.limit).toBe(8);
  expect(seen.remaining).toBeLessThan(7);
  while (seen.remaining > 0) seen = limits(await flags(h, key));
  expectRateLimited(await flags(h, key));
});

test("a plan's new limits apply to a player token answered from the recent principals (kept only while its environment is unchanged)", async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5 });
  const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'rl-plan-player');
  roomInMinute(25);
  expect(limits(await flags(h, tokens.accessToken))).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));
  expect(limits(await flags(h, tokens.accessToken))).toEqual(expect.objectContaining({ limit: 5, remaining: 3 })); // answered from them

  await h.apply([plan('test', { requestsPerMinutePerCredential: 8 })]);
  let seen = limits(await flags(h, tokens.accessToken));
  if (seen.limit !== 8) await eventually(async () => (seen = limits(await flags(h!, tokens.accessToken))).limit === 8, 10_000, 250).catch(() => undefined); // the assertion below says what was seen
  expect(seen.limit).toBe(8);
  while (seen.remaining > 0) seen = limits(await flags(h, tokens.accessToken));
  expectRateLimited(await flags(h, tokens.accessToken));
});

test('a player token counts with its refreshes, as one credential', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5 });
  roomInMinute();
  const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'rl-player');
  for (let i = 0; i < 3; i++) expect((await call(h.base, 'GET', '/players/me', { token: tokens.accessToken })).status).toBe(200);
  const refreshed = await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: tokens.refreshToken } });
  expect(refreshed.status).toBe(200);
  expect(limits(refreshed)).toEqual(expect.objectContaining({ limit: 5, remaining: 1 }));
  // The new access token is the same player: one request left for both.
  expect(limits(await call(h.base, 'GET', '/players/me', { token: refreshed.body.accessToken })).remaining).toBe(0);
  expectRateLimited(await call(h.base, 'GET', '/players/me', { token: tokens.accessToken }));
  expectRateLimited(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: refreshed.body.refreshToken } }));
});

test('a refused request is not counted', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5, requestsPerMinutePerEnvironment: 12 });
  const keyA = h.serverKeys['alpha-live-key'];
  const keyB = h.serverKeys['alpha-live-key-2'];
  roomInMinute();
  const player = await signIn(h.base, keyB, 'counted'); // keyB 1, environment 1

  for (let i = 0; i < 5; i++) expect((await flags(h, keyA)).status).toBe(200); // keyA 5, environment 6
  for (let i = 0; i < 4; i++) expectRateLimited(await flags(h, keyA)); // counted nowhere

  // Had the refusals counted, the environment would be at 10 and show 1 left after this.
  const p = await call(h.base, 'GET', '/players/me', { token: player.accessToken }); // player 1, environment 7
  expect(limits(p)).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));
  const b = await flags(h, keyB); // keyB 2, environment 8
  expect(limits(b)).toEqual(expect.objectContaining({ limit: 5, remaining: 3 }));
  const p2 = await call(h.base, 'GET', '/players/me', { token: player.accessToken }); // player 2, environment 9
  expect(limits(p2).remaining).toBe(3); // a tie: 3 left of both, either may be shown
  const p3 = await call(h.base, 'GET', '/players/me', { token: player.accessToken }); // player 3, environment 10
  expect(limits(p3)).toEqual(expect.objectContaining({ limit: 12, remaining: 2 }));

  // In Redis: the counters are exactly what was let through, and every one expires.
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const keys = await redis.keys(`${h.redisPrefix}rl:*`);
    const values = await Promise.all(keys.map(async (k) => ({ k, v: Number(await redis.get(k)), ttl: await redis.ttl(k) })));
    const env = (await h.core.environments.byAppKey('alpha-live'))!;
    const envMinute = values.find((x) => x.k.includes(`{e${env.id}}:m:`));
    expect(envMinute?.v).toBe(10);
    for (const { ttl } of values) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(86_401);
    }
  } finally {
    redis.disconnect();
  }
});

test('per environment per minute, across its credentials; other environments unaffected', async () => {
  h = await harnessWith({ requestsPerMinutePerEnvironment: 5 });
  const keyA = h.serverKeys['alpha-live-key'];
  const keyB = h.serverKeys['alpha-live-key-2'];
  roomInMinute();

  const remaining: number[] = [];
  for (const key of [keyA, keyB, keyA, keyB, keyA]) {
    const reply = await flags(h, key);
    expect(reply.status).toBe(200);
    expect(limits(reply).limit).toBe(5);
    remaining.push(limits(reply).remaining);
  }
  expect(remaining).toEqual([4, 3, 2, 1, 0]);
  expectRateLimited(await flags(h, keyA));
  const { reply: refusedB, expectLeft } = await sendTimed(secondsToNextMinute, () => flags(h!, keyB));
  expectLeft(expectRateLimited(refusedB));
  expect(limits(refusedB).limit).toBe(5);

  const otherEnv = await flags(h, h.serverKeys['alpha-test-key']);
  expect(otherEnv.status).toBe(200);
  expect(limits(otherEnv)).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));
});

test('per environment per UTC day: refused until midnight', async () => {
  h = await harnessWith({ requestsPerDayPerEnvironment: 5 });
  const keyA = h.serverKeys['alpha-live-key'];
  roomInMinute(); // also keeps clear of midnight, which is a minute boundary
  for (let i = 0; i < 5; i++) {
    const key = i % 2 ? keyA : h.serverKeys['alpha-live-key-2'];
    const { reply, expectLeft } = await sendTimed(secondsToUtcMidnight, () => flags(h!, key));
    expect(reply.status).toBe(200);
    const l = limits(reply);
    expect(l).toEqual(expect.objectContaining({ limit: 5, remaining: 4 - i }));
    expectLeft(l.reset);
  }
  const { reply: refused, expectLeft } = await sendTimed(secondsToUtcMidnight, () => flags(h!, keyA));
  expectLeft(expectRateLimited(refused));
  expect((await flags(h, h.serverKeys['alpha-test-key'])).status).toBe(200);
});

test('the headers describe the limit nearest to refusing', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5, requestsPerMinutePerEnvironment: 7 });
  const keyA = h.serverKeys['alpha-live-key'];
  const keyB = h.serverKeys['alpha-live-key-2'];
  roomInMinute();
  // On a tie (both limits as near) either may be shown: `limit` lists both then.
  const steps: [string, { limit: number[]; remaining: number }][] = [
    [keyA, { limit: [5], remaining: 4 }], // A 1/5, environment 1/7
    [keyA, { limit: [5], remaining: 3 }],
    [keyA, { limit: [5], remaining: 2 }], // A 3/5, environment 3/7
    [keyB, { limit: [7], remaining: 3 }], // B 1/5, environment 4/7
    [keyB, { limit: [7], remaining: 2 }], // B 2/5, environment 5/7
    [keyA, { limit: [5, 7], remaining: 1 }], // A 4/5, environment 6/7
    [keyB, { limit: [7], remaining: 0 }], // B 3/5, environment 7/7
  ];
  for (const [key, expected] of steps) {
    const reply = await flags(h, key);
    expect(reply.status).toBe(200);
    const l = limits(reply);
    expect({ remaining: l.remaining, limitIsExpected: expected.limit.includes(l.limit) }).toEqual({ remaining: expected.remaining, limitIsExpected: true });
  }
  const refused = await flags(h, keyB); // B has 2 left of its own: the environment refuses
  expectRateLimited(refused);
  expect(limits(refused).limit).toBe(7);
});

test('every kind of answer carries the X-RateLimit headers', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 50 });
  const key = h.serverKeys['alpha-live-key'];
  roomInMinute();
  const first = await flags(h, key);
  const replies = [
    first,
    await call(h.base, 'GET', '/flags', { token: key, headers: { 'If-None-Match': first.headers.get('etag')! } }),
    await call(h.base, 'GET', '/flags?limit=0', { token: key }),
    await call(h.base, 'GET', '/players/me'),
    await call(h.base, 'GET', '/players/me', { token: 'hsk_nope_nope' }),
    await call(h.base, 'DELETE', '/flags', { token: key }),
    await call(h.base, 'GET', '/nope'),
    await call(h.base, 'GET', '/openapi.json'),
    await call(h.base, 'GET', '/.well-known/jwks.json'),
    await call(h.base, 'GET', '/flags', { token: h.serverKeys['plain-live-key'] }),
    await call(h.base, 'GET', '/flags', { token: h.serverKeys['pending-live-key'] }),
    await call(h.base, 'POST', '/auth/server', {
      token: key,
      rawBody: JSON.stringify({ subject: 'x'.repeat(17_000) }),
      headers: { 'Content-Type': 'application/json' },
    }),
  ];
  expect(replies.map((r) => r.status)).toEqual([200, 304, 400, 401, 401, 404, 404, 200, 200, 403, 403, 413]);
  for (const reply of replies) {
    const l = limits(reply);
    expect(Number.isInteger(l.limit) && l.limit > 0).toBe(true);
    expect(Number.isInteger(l.remaining) && l.remaining >= 0).toBe(true);
    expect(Number.isInteger(l.reset) && l.reset >= 1).toBe(true);
  }
});

test('a bad or missing credential is held to the per-address limit of 600 a minute, not the environment', async () => {
  h = await harnessWith({ requestsPerMinutePerCredential: 5, requestsPerMinutePerEnvironment: 5 });
  const key = h.serverKeys['alpha-live-key'];
  roomInMinute(20);

  const bad = await flags(h, 'hsk_mistyped_key');
  expectError(bad, 401, 'unauthorized');
  expect(limits(bad)).toEqual(expect.objectContaining({ limit: 600, remaining: 599 }));
  const none = await call(h.base, 'GET', '/flags');
  expect(limits(none)).toEqual(expect.objectContaining({ limit: 600, remaining: 598 }));
  const jwks = await call(h.base, 'GET', '/.well-known/jwks.json');
  expect(limits(jwks)).toEqual(expect.objectContaining({ limit: 600, remaining: 597 }));

  // The environment has counted none of them.
  expect(limits(await flags(h, key))).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));

  // Use up the address's minute with mistyped keys, 50 at a time.
  for (let sent = 3; sent < 600;) {
    const batch = Math.min(50, 600 - sent);
    const replies = await Promise.all(Array.from({ length: batch }, () => flags(h!, 'hsk_mistyped_key')));
    expect(replies.every((r) => r.status === 401)).toBe(true);
    sent += batch;
  }
  const refused = await flags(h, 'hsk_mistyped_key');
  expectRateLimited(refused);
  expect(limits(refused).limit).toBe(600);
  expectRateLimited(await call(h.base, 'GET', '/openapi.json'));
  expectRateLimited(await call(h.base, 'GET', '/nope'));

  // A good credential is not held to the address: the environment still has 3 of its 5.
  const good = await flags(h, key);
  expect(good.status).toBe(200);
  expect(limits(good)).toEqual(expect.objectContaining({ limit: 5, remaining: 3 }));
});

describe('with Redis out of reach', () => {
  async function apiOver(
    harness: Harness,
    redisUrl: string,
  ): Promise<{ core: HearthCore; api: ApiServer; base: string; coordination: RedisCoordination; stop(): Promise<void> }> {
    const coordination = new RedisCoordination(redisUrl, { prefix: harness.redisPrefix });
    const core = new HearthCore({ db: harness.db, coordination, masterKey: harness.masterKey, logger: createLogger('silent'), clock });
    await core.start();
    const api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: 0 });
    return {
      core,
      api,
      coordination,
      base: `${api.url}/v1`,
      stop: async () => {
        await api.close();
        await core.stop();
        await coordination.close();
      },
    };
  }

  test('requests are still served (limits fail open, and a metric says so); limits resume when Redis is back', async () => {
    h = await harnessWith({ requestsPerMinutePerCredential: 5 });
    const relay = new RedisRelay();
    await relay.open();
    const instance = await apiOver(h, `redis://127.0.0.1:${relay.port}`);
    const key = h.serverKeys['alpha-live-key'];
    try {
      roomInMinute();
      const before = await call(instance.base, 'GET', '/flags', { token: key });
      expect(limits(before)).toEqual(expect.objectContaining({ limit: 5, remaining: 4 }));

      await relay.cut();
      const timings: number[] = [];
      for (let i = 0; i < 8; i++) {
        const started = Date.now();
        const reply = await call(instance.base, 'GET', i % 2 ? '/flags' : '/players/nobody', { token: key });
        timings.push(Date.now() - started);
        expect(reply.status).toBe(i % 2 ? 200 : 404);
      }
      // A sign-in writes to PostgreSQL only: it works too.
      const signed = await call(instance.base, 'POST', '/auth/server', { token: key, body: { subject: 'while-redis-is-down' } });
      expect(signed.status).toBe(201);
      expect((await call(instance.base, 'GET', '/players/me', { token: signed.body.accessToken })).status).toBe(200);
      // Failing open is immediate, not a wait on Redis timeouts for every request.
      for (const ms of timings) expect(ms).toBeLessThan(500);

      const metrics = await (await fetch(instance.api.metricsUrl!)).text();
      const failOpen = Number(/^hearth_rate_limit_fail_open_total (\d+)/m.exec(metrics)?.[1]);
      expect(failOpen).toBeGreaterThanOrEqual(8);

      // Back: what slipped through unchecked was not counted, and the limit holds again.
      await relay.open(relay.port);
      await eventually(() => instance.coordination.ping(), 10_000, 100);
      const remaining: number[] = [];
      for (let i = 0; i < 4; i++) {
        const reply = await call(instance.base, 'GET', '/flags', { token: key });
        expect(reply.status).toBe(200);
        remaining.push(limits(reply).remaining);
      }
      expect(remaining).toEqual([3, 2, 1, 0]);
      expectRateLimited(await call(instance.base, 'GET', '/flags', { token: key }));
    } finally {
      await instance.stop();
      await relay.cut().catch(() => undefined);
    }
  });

  test('an API started while Redis is unreachable starts and serves', async () => {
    h = await harnessWith({});
    // A port that was free a moment ago: nothing listens there.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const instance = await Promise.race([
      apiOver(h, `redis://127.0.0.1:${port}`),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the API did not start within 10 s with Redis unreachable')), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    try {
      expect(Date.now() - started).toBeLessThan(10_000);
      const reply = await call(instance.base, 'GET', '/flags', { token: h.serverKeys['alpha-live-key'] });
      expect(reply.status).toBe(200);
      const ready = await call(instance.base.replace(/\/v1$/, ''), 'GET', '/readyz');
      expect(ready.body).toEqual(expect.objectContaining({ postgres: true, redis: false }));
    } finally {
      await instance.stop();
    }
  });
});

test('identity-provider sign-in: 120 a minute per address for the environment named; the 121st is 429 and other environments are still open', async () => {
  h = await harnessWith({});
  roomInMinute(15);
  // alpha has no identity provider set up: each sign-in is counted, then refused provider-disabled.
  const signInIdp = (appKey: string) => call(h!.base, 'POST', '/auth/idp', { body: { appKey, idToken: 'not-a-token' } });
  for (let i = 1; i <= 120; i++) {
    const reply = await signInIdp('alpha-live');
    expectError(reply, 403, 'provider-disabled');
    if (i === 1) expect(limits(reply)).toMatchObject({ limit: 120, remaining: 119 });
  }
  expectRateLimited(await signInIdp('alpha-live'));
  // Its own limit: the same address may still sign in to another environment.
  expectError(await signInIdp('alpha-test'), 403, 'provider-disabled');
  // Counted per address, not against the environment: a key of alpha-live still has its full minute.
  const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'idp-limit-bystander');
  const read = await flags(h, tokens.accessToken);
  expect(read.status).toBe(200);
  expect(limits(read).limit).toBeGreaterThan(120);
});
