/**
 * PostgreSQL restarted under load (docs/reliability.md, "Faults: Redis and PostgreSQL restarts"): a
 * real `hearth api` process on a PostgreSQL of the test's own (test/support/own-postgres.ts) and a
 * Redis of its own, a few clients crediting gold with Idempotency-Keys and writing saves, each
 * retrying with the same key and body on a 503 or a dropped connection, as the spec tells clients to.
 * PostgreSQL stops (fast shutdown: every session ended) for a few seconds and starts again. Held:
 * while it is down every answer is the spec's 503 `unavailable`, promptly (never a 500, never a hang);
 * the same process answers 2xx again by itself; and no retried write is applied twice: each player's
 * ledger holds exactly one entry per acknowledged key and the balance is their sum.
 */
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres';
import { type OwnRedis, startOwnRedis } from '../support/own-redis';
import { sleep } from '../support/wait';
import { Load, type Player, type Stack, expectAlive, expectNothingLostOrDoubled, send, startStack } from './load';
import { reportFigure } from '../support/figures';

jest.setTimeout(150_000);

const DOWN_MS = 4_000;
/** How long an answer may take while the database is down: a refused connection is not waited on. */
const PROMPT_MS = 5_000;

let pg: OwnPostgres;
let redis: OwnRedis;
let stack: Stack;

beforeAll(async () => {
  [pg, redis] = await Promise.all([startOwnPostgres(), startOwnRedis()]);
  stack = await startStack('postgres', { DATABASE_URL: pg.url, REDIS_URL: redis.url });
});

afterAll(async () => {
  await stack?.stop();
  await pg?.remove();
  await redis?.remove();
});

test('PostgreSQL restarted mid-load: 503 unavailable while down, recovery without a restart, no retried write applied twice', async () => {
  const players: Player[] = [];
  for (const s of ['a', 'b', 'c']) {
    const o = await send(stack.base, 'POST', '/auth/server', { token: stack.serverKey, body: { subject: `faults-pg-${s}` } });
    expect(o.status).toBe(201);
    players.push({ id: o.body.player.id, token: o.body.accessToken });
  }

  const load = new Load(stack.base, stack.serverKey, players);
  load.start();
  await sleep(2_000);

  const stoppedAt = Date.now();
  await pg.stop();
  await sleep(DOWN_MS);
  await pg.start();
  const backAt = Date.now();

  // Back by itself: the first 2xx of a request sent after PostgreSQL accepted connections again.
  let firstOkAt = 0;
  const deadline = Date.now() + 30_000;
  while (!firstOkAt && Date.now() < deadline) {
    await sleep(25);
    firstOkAt = Math.min(...load.outcomes.filter((o) => o.at >= backAt && o.status !== undefined && o.status < 300).map((o) => o.at + o.ms));
    if (!Number.isFinite(firstOkAt)) firstOkAt = 0;
  }
  expect(firstOkAt).toBeGreaterThan(0);
  const recoveryMs = firstOkAt - backAt;

  await sleep(2_000);
  await load.stop();
  expectAlive(stack.api);

  // Every answer is a success or the spec's 503 `unavailable` in the error shape, promptly.
  expect(load.wrong).toEqual([]);
  const unavailable = load.outcomes.filter((o) => o.status === 503);
  expect(unavailable.length).toBeGreaterThan(0);
  for (const o of unavailable) {
    expect({
      error: o.body?.error,
      keys: Object.keys(o.body ?? {}).filter((k) => !['error', 'message', 'details'].includes(k)),
      message: typeof o.body?.message,
    }).toEqual({
      error: 'unavailable',
      keys: [],
      message: 'string',
    });
  }
  expect(load.outcomes.filter((o) => o.kind === 'timeout')).toEqual([]);
  const slowest = Math.max(...load.outcomes.filter((o) => o.status !== undefined && o.status >= 500).map((o) => o.ms));
  expect(slowest).toBeLessThan(PROMPT_MS);
  // After the first 2xx, none but 2xx: the pool has dropped every connection the restart ended.
  const afterRecovery = load.outcomes.filter((o) => o.at > firstOkAt + 1_000);
  expect(afterRecovery.length).toBeGreaterThan(0);
  expect(afterRecovery.filter((o) => o.status === undefined || o.status >= 300)).toEqual([]);

  // No retried write applied twice, none acknowledged lost.
  const durable = await expectNothingLostOrDoubled(stack.base, stack.serverKey, load, players);

  const during = load.byKind(stoppedAt, backAt);
  const figures = {
    requests: load.outcomes.length,
    byKind: load.byKind(),
    duringOutage: { seconds: (backAt - stoppedAt) / 1000, requests: Object.values(during).reduce((a, b) => a + b, 0), byKind: during },
    slowestErrorMs: slowest,
    recoveryMs,
    creditsAcknowledged: durable.reduce((n, p) => n + p.references.length, 0),
    creditsReplayed: load.outcomes.filter((o) => o.status === 200 && o.body?.replayed === true).length,
  };
  reportFigure(`postgres restart figures: ${JSON.stringify(figures)}`);
});
