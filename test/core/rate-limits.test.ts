/**
 * The rate-limit contract of both coordination implementations. Redis checks every request of one
 * event-loop turn in one Lua call; these tests fire many checks in the same turn and hold that batch to
 * the semantics of one atomic call per request, in order.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { type Coordination, MemoryCoordination, type RateCheck, RedisCoordination } from '@hearth/core/coord';
import { TEST_REDIS_URL } from '../support/env';

const prefix = `hearth-test:${randomBytes(6).toString('hex')}:`;
const redis = new Redis(TEST_REDIS_URL);
const redisCoordination = new RedisCoordination(TEST_REDIS_URL, { prefix });
const memoryCoordination = new MemoryCoordination();
// Keys of each test are new: a tag of their own per test and implementation.
let serial = 0;

beforeAll(async () => {
  expect(await redisCoordination.ping()).toBe(true); // connected: checks made while connecting fail open
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.unlink(...keys);
  await Promise.all([redis.quit(), redisCoordination.close(), memoryCoordination.close()]);
});

function checksFor(tag: string, limits: { env: number; credential: number }, credential: string): RateCheck[] {
  return [
    { name: 'environment-minute', key: `{${tag}}:m`, limit: limits.env, windowSeconds: 60 },
    { name: 'credential-minute', key: `{${tag}}:c:${credential}`, limit: limits.credential, windowSeconds: 60 },
  ];
}

// One instant for every call of a test, so that no call falls into the next minute's window.
const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);

describe.each([
  ['Redis', () => redisCoordination as Coordination],
  ['in-process', () => memoryCoordination as Coordination],
])('%s rate limits', (_name, coordinationOf) => {
  let tag: string;
  beforeEach(() => {
    tag = `t${++serial}`;
  });

  test('requests checked in one turn pass up to the limit, in order, each seeing the count after it', async () => {
    const c = coordinationOf();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => c.rateLimit(checksFor(tag, { env: 100, credential: 5 }, 'p1'), NOW)));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, true, true, false, false, false]);
    expect(outcomes.slice(0, 5).map((o) => o.nearest.remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const refused of outcomes.slice(5)) {
      expect(refused.nearest).toEqual({ name: 'credential-minute', limit: 5, remaining: 0, resetSeconds: 30 });
    }
    // Refused requests were not counted: the environment counter holds the five that passed.
    const envOutcome = await c.rateLimit([{ name: 'environment-minute', key: `{${tag}}:m`, limit: 100, windowSeconds: 60 }], NOW);
    expect(envOutcome).toEqual({ allowed: true, nearest: { name: 'environment-minute', limit: 100, remaining: 94, resetSeconds: 30 } });
  });

  test('two credentials under one environment limit share it in order', async () => {
    const c = coordinationOf();
    const limits = { env: 6, credential: 4 };
    const calls = ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'].map((who) => c.rateLimit(checksFor(tag, limits, who), NOW));
    const outcomes = await Promise.all(calls);
    // Six pass (three each, alternating); then the environment's limit refuses everyone.
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, true, true, true, false, false, false, false]);
    expect(outcomes[5].nearest).toEqual({ name: 'environment-minute', limit: 6, remaining: 0, resetSeconds: 30 });
    expect(outcomes[6].nearest.name).toBe('environment-minute');
  });

  test('checks under different hash tags in one turn are counted apart', async () => {
    const c = coordinationOf();
    const other = `${tag}-other`;
    const outcomes = await Promise.all([
      c.rateLimit(checksFor(tag, { env: 1, credential: 10 }, 'p'), NOW),
      c.rateLimit(checksFor(other, { env: 1, credential: 10 }, 'p'), NOW),
      c.rateLimit(checksFor(tag, { env: 1, credential: 10 }, 'p'), NOW),
      c.rateLimit(checksFor(other, { env: 1, credential: 10 }, 'p'), NOW),
    ]);
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, false, false]);
  });

  test('the same check list asked again reports each second its own reset', async () => {
    const c = coordinationOf();
    const checks = checksFor(tag, { env: 100, credential: 100 }, 'p');
    const first = await c.rateLimit(checks, NOW);
    const later = await c.rateLimit(checks, NOW + 1_000);
    expect([first.nearest.resetSeconds, later.nearest.resetSeconds]).toEqual([30, 29]);
    expect(later.nearest.remaining).toBe(first.nearest.remaining - 1);
  });

  test('a new window starts from zero', async () => {
    const c = coordinationOf();
    const checks = checksFor(tag, { env: 1, credential: 1 }, 'p');
    expect((await c.rateLimit(checks, NOW)).allowed).toBe(true);
    expect((await c.rateLimit(checks, NOW)).allowed).toBe(false);
    expect((await c.rateLimit(checks, NOW + 30_000)).allowed).toBe(true);
  });
});

test('Redis counters carry the window as their lifetime', async () => {
  const tag = `ttl${++serial}`;
  await redisCoordination.rateLimit(checksFor(tag, { env: 10, credential: 10 }, 'p'), Date.now());
  const keys = await redis.keys(`${prefix}rl:{${tag}}*`);
  expect(keys).toHaveLength(2);
  for (const key of keys) {
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(61);
  }
});

test('a Redis coordination that cannot reach Redis refuses at once, so callers fail open', async () => {
  const down = new RedisCoordination('redis://127.0.0.1:1', { prefix, onError: () => undefined });
  try {
    await expect(down.rateLimit(checksFor('down', { env: 1, credential: 1 }, 'p'))).rejects.toThrow(/redis is/);
  } finally {
    await down.close();
  }
});
