/**
 * An increment answers the value it made (spec §4 Stats "Stat with the new value"; docs/progression.md
 * "The environment-wide counter"): each answer is the counter's value right after that increment in
 * one order of all increments of the counter, with real concurrency (many HTTP connections, two API
 * processes over one database, so two combiners meet on one row). The increments of one counter that
 * arrive while a statement for it is in flight are combined into one statement; a step past the
 * 64-bit range inside a combined statement is refused alone; a statement that fails as a whole (the
 * connection cut) fails every increment it carried and applies none; Idempotency-Key retries answer
 * their first value and add nothing.
 */
import { Client } from 'pg';
import { Refusal } from '@hearth/core';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { ApiInstance } from '../support/harness';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { realm, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';
import { databaseUrl } from '../support/env';

jest.setTimeout(60_000);

const INT64_MAX = 9223372036854775807n;

let h: Harness;
let other: ApiInstance;
let key: string;
let env: EnvironmentContext;
/** The increments' statements the first API process sent (knex's `query` events). */
let statements = 0;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      realm('season-1', { environment: 'alpha-live', key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
    ],
  });
  other = await h.startAnotherApi();
  key = h.serverKeys['alpha-live-key'];
  env = (await h.core.environments.byAppKey('alpha-live'))!;
  h.db.on('query', (q: { sql: string }) => {
    if (q.sql.includes('hearth_stat_increments')) statements++;
  });
});
afterAll(async () => {
  await h.close();
});

const bases = () => [h.base, other.base];
const bump = (base: string, path: string, body: unknown = {}, idem?: string) =>
  call(base, 'POST', `${path}/increment`, { token: key, body, headers: idem ? { 'Idempotency-Key': idem } : {} });
async function read(stat: string, owner = ''): Promise<bigint> {
  const reply = await call(h.base, 'GET', `${owner}/stats`, { token: key });
  expect(reply.status).toBe(200);
  return BigInt((reply.body.items as { key: string; value: string }[]).find((s) => s.key === stat)?.value ?? '0');
}

/**
 * Whether the answers fit one order of the increments (every step positive): in the order of their
 * values, each answer less its own step is the answer before it (the first: the starting value).
 */
function chained(start: bigint, answered: { by: number; value: bigint }[]): boolean {
  const sorted = [...answered].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  let before = start;
  for (const a of sorted) {
    if (a.value - BigInt(a.by) !== before) return false;
    before = a.value;
  }
  return true;
}

describe('parallel increments of one counter over HTTP, from two API processes and many connections', () => {
  test('200 increments by 1 answer 200 distinct values, exactly start+1..start+200, in fewer statements than increments; the read equals the last', async () => {
    for (const path of ['/stats/race.ones', `/players/${(await signIn(h.base, key, 'race-ones')).player.id}/stats/race.ones`]) {
      const start = BigInt((await bump(h.base, path)).body.value);
      const before = statements;
      const n = 200;
      const replies = await Promise.all(Array.from({ length: n }, (_, i) => bump(bases()[i % 2], path)));
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      const values = replies.map((r) => BigInt(r.body.value)).sort((a, b) => (a < b ? -1 : 1));
      expect(values).toEqual(Array.from({ length: n }, (_, i) => start + BigInt(i + 1)));
      // Combined: the two processes' combiners sent fewer statements than increments.
      expect(statements - before).toBeLessThan(n);
      expect(await read('race.ones', path.startsWith('/players') ? path.slice(0, path.indexOf('/stats')) : '')).toBe(start + BigInt(n));
    }
  });

  test('200 increments of mixed steps, per realm: the answers fit one order (each answer less its step is the answer before)', async () => {
    const start = BigInt((await bump(h.base, '/stats/race.mixed', { realmId: 's1', by: 7 })).body.value);
    const steps = Array.from({ length: 200 }, (_, i) => 1 + ((i * 7919) % 1000));
    const replies = await Promise.all(steps.map((by, i) => bump(bases()[i % 2], '/stats/race.mixed', { by, realmId: 's1' })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    const answered = replies.map((r, i) => ({ by: steps[i], value: BigInt(r.body.value) }));
    expect(chained(start, answered)).toBe(true);
    const total = start + BigInt(steps.reduce((a, b) => a + b, 0));
    expect(answered.reduce((m, a) => (a.value > m ? a.value : m), start)).toBe(total);
    expect((await call(h.base, 'GET', '/stats?realmId=s1', { token: key })).body.items).toContainEqual({ key: 'race.mixed', value: total.toString() });
  });

  test('near the top of the range: of 30 parallel steps of 100 from 1,000 below it, exactly 10 are answered (a chain up to the top) and 20 refused on body.by', async () => {
    await bump(h.base, '/stats/race.top');
    await h
      .db('environment_stats')
      .where({ environment_id: env.id, key: 'race.top' })
      .update({ value: (INT64_MAX - 1000n).toString() });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => bump(bases()[i % 2], '/stats/race.top', { by: 100 })));
    const answered = replies.filter((r) => r.status === 200).map((r) => ({ by: 100, value: BigInt(r.body.value) }));
    expect(answered).toHaveLength(10);
    expect(chained(INT64_MAX - 1000n, answered)).toBe(true);
    for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 400, 'invalid-request', 'body.by');
    expect(await read('race.top')).toBe(INT64_MAX);
  });

  test('Idempotency-Key increments among plain ones: each key answers its first value to every retry and counts once; all answers distinct, exactly the range', async () => {
    const start = BigInt((await bump(h.base, '/stats/race.keyed')).body.value);
    const plain = Array.from({ length: 100 }, (_, i) => bump(bases()[i % 2], '/stats/race.keyed'));
    // Each key sent twice at once, from both processes.
    const keyed = Array.from({ length: 10 }, (_, i) => Promise.all(bases().map((base) => bump(base, '/stats/race.keyed', {}, `race-keyed-${i}`))));
    const [plainReplies, keyedReplies] = await Promise.all([Promise.all(plain), Promise.all(keyed)]);
    expect(plainReplies.map((r) => r.status)).toEqual(plainReplies.map(() => 200));
    for (const pair of keyedReplies) {
      expect(pair.map((r) => r.status)).toEqual([200, 200]);
      expect(pair[1].body).toEqual(pair[0].body);
    }
    const values = [...plainReplies.map((r) => r.body.value), ...keyedReplies.map((pair) => pair[0].body.value)].map(BigInt).sort((a, b) => (a < b ? -1 : 1));
    expect(values).toEqual(Array.from({ length: 110 }, (_, i) => start + BigInt(i + 1)));
    // A later retry answers the first value again and adds nothing.
    const again = await bump(other.base, '/stats/race.keyed', {}, 'race-keyed-3');
    expect(again.body).toEqual(keyedReplies[3][0].body);
    expect(await read('race.keyed')).toBe(start + 110n);
  });

  test('refusals of the counter answer every request it carried: an unknown realm, an unknown player', async () => {
    const unknownRealm = await Promise.all(Array.from({ length: 20 }, (_, i) => bump(bases()[i % 2], '/stats/race.refused', { realmId: 'nope' })));
    for (const r of unknownRealm) expectError(r, 404, 'not-found');
    const unknownPlayer = await Promise.all(Array.from({ length: 20 }, (_, i) => bump(bases()[i % 2], '/players/nobody/stats/race.refused')));
    for (const r of unknownPlayer) expectError(r, 404, 'not-found');
    expect(await h.db('environment_stats').where({ key: 'race.refused' })).toEqual([]);
  });
});

describe('how the service combines (its pool, one process)', () => {
  const increment = (stat: string, by: number) => h.core.stats.increment(h.db, env, null, stat, { by });

  test('increments arriving while one is in flight go in one statement; a step past the range in it is refused alone and the others go on', async () => {
    await increment('combined.edge', 1);
    await h
      .db('environment_stats')
      .where({ environment_id: env.id, key: 'combined.edge' })
      .update({ value: (INT64_MAX - 10n).toString() });
    const before = statements;
    // The first is sent at once; the four others arrive while it is in flight and go in the next statement.
    const outcomes = await Promise.allSettled([1, 100, 3, 20, 4].map((by) => increment('combined.edge', by)));
    expect(statements - before).toBe(2);
    const values = outcomes.map((o) => (o.status === 'fulfilled' ? o.value.value : null));
    expect(values).toEqual([(INT64_MAX - 9n).toString(), null, (INT64_MAX - 6n).toString(), null, (INT64_MAX - 2n).toString()]);
    for (const [i, held] of [
      [1, INT64_MAX - 9n],
      [3, INT64_MAX - 6n],
    ] as const) {
      const refused = (outcomes[i] as PromiseRejectedResult).reason;
      expect(refused).toBeInstanceOf(Refusal);
      expect(refused).toMatchObject({ code: 'invalid-request', details: { field: 'by' } });
      expect(refused.message).toContain(held.toString());
    }
    expect(await read('combined.edge')).toBe(INT64_MAX - 2n);
  });

  test('a statement cut off as a whole (its connection terminated) fails every increment it carried and applies none; the next ones go on', async () => {
    await increment('combined.cut', 1);
    // Another client holds the counter's row, so the increments' statements wait on it; a third
    // watches them (pg_stat_activity is read once per transaction: the holder's would stay as it was).
    const holder = new Client({ connectionString: databaseUrl(h.database.name) });
    const watcher = new Client({ connectionString: databaseUrl(h.database.name) });
    await holder.connect();
    await watcher.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT value FROM environment_stats WHERE environment_id = $1 AND key = $2 FOR UPDATE', [env.id, 'combined.cut']);
      const waiting = async (except: number[]) =>
        (
          await watcher.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%hearth_stat_increments%' AND wait_event_type = 'Lock' AND NOT (pid = ANY($1))",
            [except],
          )
        ).rows.map((r) => r.pid as number);
      // The first statement carries one increment; the 20 queued behind it go in the second.
      const first = increment('combined.cut', 1).then(
        () => 'answered',
        (err: unknown) => err,
      );
      let settled = false;
      const queued = Promise.all(
        Array.from({ length: 20 }, () =>
          increment('combined.cut', 1).then(
            () => 'answered',
            (err: unknown) => err,
          ),
        ),
      ).finally(() => (settled = true));
      let pids: number[] = [];
      await eventually(async () => (pids = await waiting([])).length === 1, 10_000);
      await watcher.query('SELECT pg_terminate_backend($1)', [pids[0]]);
      expect(await first).toBeInstanceOf(Error);
      // The second fails as a whole too: on the pool's connection the cut left behind, or, on a new
      // one, waiting on the row, where it is cut the same way.
      await eventually(async () => {
        if (settled) return true;
        const second = await waiting(pids);
        if (second.length === 1) await watcher.query('SELECT pg_terminate_backend($1)', [second[0]]);
        return false;
      }, 10_000);
      for (const o of await queued) {
        expect(o).toBeInstanceOf(Error);
        expect(o).not.toBeInstanceOf(Refusal);
      }
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await watcher.end();
    }
    expect(await read('combined.cut')).toBe(1n);
    expect((await increment('combined.cut', 1)).value).toBe('2');
  });
});
