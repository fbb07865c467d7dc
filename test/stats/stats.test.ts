/**
 * Stats (spec §2 Stat, §4 Stats; docs/progression.md "Stats"), over real HTTP: a player's and the
 * environment's counters, per realm and across every realm, `by` of either sign (default 1), values as
 * decimal strings past 2^53, a move past the 64-bit range refused (never wrapped) and changing
 * nothing, every other refusal, and concurrent retried increments (Jepsen-style): every counter is
 * the sum of the increments acknowledged, each Idempotency-Key applied once.
 */
import { random, sendAsPatterned, type Operation } from '../economy/jepsen-model';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { projectWithout, realm, standardManifests } from '../support/manifests';

jest.setTimeout(60_000);

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      ...projectWithout('nostats', 'stats'),
      realm('permanent', { environment: 'alpha-live', number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
      realm('season-1', { environment: 'alpha-live', key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
    ],
  });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const bump = (path: string, body: unknown = {}, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `${path}/increment`, { token: opts.token ?? key, body, headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {} });
async function list(path: string, query = '', token = key) {
  const reply = await call(h.base, 'GET', `${path}${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: { key: string; value: string }[]; next: string | null };
}
const valueOf = async (path: string, stat: string, query = '') => (await list(path, query)).items.find((s) => s.key === stat)?.value ?? null;

describe("a player's stats", () => {
  test('increments by 1 by default, by any whole number of either sign; per realm, and across every realm when none is named', async () => {
    const p = await signIn(h.base, key, 'stats-basic');
    const path = `/players/${p.player.id}/stats`;
    expect((await bump(`${path}/kills`)).body).toEqual({ key: 'kills', value: '1' });
    expect((await bump(`${path}/kills`, { by: 9 })).body).toEqual({ key: 'kills', value: '10' });
    expect((await bump(`${path}/kills`, { by: -3, realmId: null })).body).toEqual({ key: 'kills', value: '7' });
    expect((await bump(`${path}/kills`, { by: 5, realmId: 's1' })).body).toEqual({ key: 'kills', value: '5' });
    expect((await bump(`${path}/deaths`, { by: -2, realmId: 'permanent' })).body).toEqual({ key: 'deaths', value: '-2' });
    expect(await list(path)).toEqual({
      items: [
        { key: 'deaths', value: '-2' },
        { key: 'kills', value: '12' },
      ],
      next: null,
    });
    expect((await list(path, '?realmId=s1')).items).toEqual([{ key: 'kills', value: '5' }]);
    expect((await list('/players/me/stats', '?realmId=permanent', p.accessToken)).items).toEqual([{ key: 'deaths', value: '-2' }]);
    const first = await list(path, '?limit=1');
    expect(first.items).toEqual([{ key: 'deaths', value: '-2' }]);
    expect(await list(path, `?limit=1&cursor=${encodeURIComponent(first.next!)}`)).toEqual({ items: [{ key: 'kills', value: '12' }], next: null });
  });

  test('64-bit: values past 2^53 as exact decimal strings; a move past the range is refused (invalid-request on by) and changes nothing', async () => {
    const p = await signIn(h.base, key, 'stats-range');
    const path = `/players/${p.player.id}/stats`;
    await bump(`${path}/big`, { by: Number.MAX_SAFE_INTEGER });
    await h
      .db('player_stats')
      .where({ player_id: p.player.id, key: 'big' })
      .update({ value: (INT64_MAX - 10n).toString() });
    expect((await bump(`${path}/big`, { by: 10 })).body).toEqual({ key: 'big', value: INT64_MAX.toString() });
    expectError(await bump(`${path}/big`), 400, 'invalid-request', 'body.by');
    expect(await valueOf(path, 'big')).toBe(INT64_MAX.toString());
    await bump(`${path}/low`, { by: -1 });
    await h
      .db('player_stats')
      .where({ player_id: p.player.id, key: 'low' })
      .update({ value: (INT64_MIN + 1n).toString() });
    expect((await bump(`${path}/low`, { by: -1 })).body.value).toBe(INT64_MIN.toString());
    expectError(await bump(`${path}/low`, { by: -1 }), 400, 'invalid-request', 'body.by');
    expect(await valueOf(path, 'low')).toBe(INT64_MIN.toString());
  });

  test('refusals change nothing: by 0, fractions, past 2^53-1, strings; unknown fields; bad keys; unknown realm; a player token; unknown player; another environment; the service off', async () => {
    const p = await signIn(h.base, key, 'stats-refusals');
    const path = `/players/${p.player.id}/stats`;
    await bump(`${path}/k`);
    for (const by of [0, 1.5, Number.MAX_SAFE_INTEGER + 2, '1', null]) expectError(await bump(`${path}/k`, { by }), 400, 'invalid-request', 'body.by');
    expectError(await bump(`${path}/k`, { step: 1 }), 400, 'invalid-request', 'body.step');
    expectError(await bump(`${path}/-k`), 400, 'invalid-request', 'path.key');
    expectError(await bump(`${path}/k`, { realmId: 'nope' }), 404, 'not-found');
    expectError(await bump('/players/me/stats/k', {}, { token: p.accessToken }), 403, 'forbidden');
    expectError(await bump('/players/nobody/stats/k'), 404, 'not-found');
    expectError(await bump(`${path}/k`, {}, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `${path}?realmId=nope`, { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', path, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `${path}?sort=key`, { token: key }), 400, 'invalid-request', 'query.sort');
    const q = await signIn(h.base, h.serverKeys['nostats-live-key'], 'nostats');
    expectError(await bump(`/players/${q.player.id}/stats/k`, {}, { token: h.serverKeys['nostats-live-key'] }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/stats', { token: q.accessToken }), 403, 'service-disabled');
    expect(await list(path)).toEqual({ items: [{ key: 'k', value: '1' }], next: null });
  });
});

describe("the environment's stats", () => {
  test("either credential reads, a server increments; per realm and across every realm; each realm's counter is one row", async () => {
    const p = await signIn(h.base, key, 'env-stats');
    expect((await bump('/stats/matches')).body).toEqual({ key: 'matches', value: '1' });
    expect((await bump('/stats/matches', { by: 4, realmId: 's1' })).body).toEqual({ key: 'matches', value: '4' });
    expect((await list('/stats', '', p.accessToken)).items).toContainEqual({ key: 'matches', value: '5' });
    expect((await list('/stats', '?realmId=s1')).items).toEqual([{ key: 'matches', value: '4' }]);
    expectError(await bump('/stats/matches', {}, { token: p.accessToken }), 403, 'forbidden');
    expectError(await bump('/stats/matches', { by: 0 }), 400, 'invalid-request', 'body.by');
    // The environment's counters are not a player's, nor another environment's.
    expect((await list(`/players/${p.player.id}/stats`)).items).toEqual([]);
    expect((await list('/stats', '', h.serverKeys['alpha-test-key'])).items).toEqual([]);
    const rows = await h.db('environment_stats').where({ key: 'matches' }).orderBy('realm_key').select('realm_key', 'value');
    expect(rows).toEqual([
      { realm_key: '', value: '1' },
      { realm_key: 's1', value: '4' },
    ]);
  });

  test('past the 64-bit range: refused, nothing changed; back within it, answered', async () => {
    await bump('/stats/huge', { by: 1 });
    await h
      .db('environment_stats')
      .where({ key: 'huge' })
      .update({ value: (INT64_MAX - 6n).toString() });
    expect((await bump('/stats/huge', { by: 5 })).body.value).toBe((INT64_MAX - 1n).toString());
    expectError(await bump('/stats/huge', { by: 2 }), 400, 'invalid-request', 'body.by');
    expect(await valueOf('/stats', 'huge')).toBe((INT64_MAX - 1n).toString());
    expect((await bump('/stats/huge', { by: -Number.MAX_SAFE_INTEGER })).body.value).toBe((INT64_MAX - 1n - BigInt(Number.MAX_SAFE_INTEGER)).toString());
    await h
      .db('environment_stats')
      .where({ key: 'huge' })
      .update({ value: (INT64_MIN + 1n).toString() });
    expect((await bump('/stats/huge', { by: -1 })).body.value).toBe(INT64_MIN.toString());
    expectError(await bump('/stats/huge', { by: -1 }), 400, 'invalid-request', 'body.by');
    expect(await valueOf('/stats', 'huge')).toBe(INT64_MIN.toString());
  });

  test('concurrent increments retried at random from many connections: each counter is the sum of the acknowledged increments, each key applied once', async () => {
    const seed = Number(process.env.JEPSEN_SEED ?? Date.now() % 1_000_000);
    const rand = random(seed);
    const p = (await signIn(h.base, key, `stats-j-${seed}`)).player.id;
    type Answer = { status: number; body: any };
    const stat = `jepsen.${seed}`;
    const ops: (Operation<Answer> & { path: string; by: number; keyed: boolean })[] = Array.from({ length: 300 }, (_, i) => {
      const by = Math.floor(rand() * 2001) - 1000 || 1;
      const path = rand() < 0.5 ? `/stats/${stat}` : `/players/${p}/stats/${stat}`;
      const keyed = rand() < 0.8;
      return {
        key: `stats-j-${seed}-${i}`,
        playerId: p,
        currencyKey: '',
        kind: 'credit',
        change: by,
        by,
        path,
        keyed,
        body: { by },
        pattern: keyed ? (['once', 'race', 'later', 'both'] as const)[Math.floor(rand() * 4)] : 'once',
        answers: [],
      };
    });
    const send = async (op: (typeof ops)[number]) => {
      const reply = await bump(op.path, op.body, op.keyed ? { idem: op.key } : {});
      op.answers.push({ status: reply.status, body: reply.body });
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (next < ops.length) await sendAsPatterned(ops[next++], (op) => send(op as (typeof ops)[number]), rand);
      }),
    );
    for (const op of ops) {
      expect(op.answers.map((a) => a.status)).toEqual(op.answers.map(() => 200));
      for (const a of op.answers) expect(a.body).toEqual(op.answers[0].body);
    }
    const sum = (path: string) =>
      ops
        .filter((o) => o.path === path)
        .reduce((n, o) => n + o.by, 0)
        .toString();
    expect(await valueOf('/stats', stat)).toBe(sum(`/stats/${stat}`));
    expect(await valueOf(`/players/${p}/stats`, stat)).toBe(sum(`/players/${p}/stats/${stat}`));
  });
});

test("deleting a player takes their stats; the environment's counters keep what they counted", async () => {
  const p = await signIn(h.base, key, 'stats-leaver');
  await bump(`/players/${p.player.id}/stats/leaves`, { by: 2 });
  await bump('/stats/leaves', { by: 2 });
  expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
  expect(await h.db('player_stats').where({ player_id: p.player.id })).toEqual([]);
  expect(await valueOf('/stats', 'leaves')).toBe('2');
});
