/**
 * Stats (spec §2 Stat, §4 Stats; docs/progression.md "Stats"), over real HTTP: a player's and the
 * environment's counters answered and listed to either credential, pages and cursors, the status and
 * body of every refusal (the routes' schemas, credentials, the service switched off, a move past the
 * 64-bit range), and concurrent retried increments (Jepsen-style): every counter is the sum of the
 * increments acknowledged, each Idempotency-Key applied once. The rules themselves (realms, either
 * sign, the 64-bit range, each refusal changing nothing, a player's deletion) are held on core's stat
 * service in test/stats/rules.test.ts.
 */
import { random, sendAsPatterned, type Operation } from '../economy/jepsen-model';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { projectWithout, realm, standardManifests } from '../support/manifests';

jest.setTimeout(60_000);

const INT64_MAX = 9223372036854775807n;

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
  test('an increment answers the key and its new value; the list reads to a server key and to `me`, of one realm, paged by cursor', async () => {
    const p = await signIn(h.base, key, 'stats-basic');
    const path = `/players/${p.player.id}/stats`;
    expect((await bump(`${path}/kills`)).body).toEqual({ key: 'kills', value: '1' });
    expect((await bump(`${path}/kills`, { by: 4, realmId: 's1' })).body).toEqual({ key: 'kills', value: '4' });
    expect((await bump(`${path}/deaths`, { by: -2, realmId: 'permanent' })).body).toEqual({ key: 'deaths', value: '-2' });
    expect((await list('/players/me/stats', '?realmId=permanent', p.accessToken)).items).toEqual([{ key: 'deaths', value: '-2' }]);
    const first = await list(path, '?limit=1');
    expect(first.items).toEqual([{ key: 'deaths', value: '-2' }]);
    expect(await list(path, `?limit=1&cursor=${encodeURIComponent(first.next!)}`)).toEqual({ items: [{ key: 'kills', value: '5' }], next: null });
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
  test('either credential reads, a server increments (a player token is forbidden); a move past the 64-bit range is 400 naming body.by', async () => {
    const p = await signIn(h.base, key, 'env-stats');
    expect((await bump('/stats/matches')).body).toEqual({ key: 'matches', value: '1' });
    expect((await list('/stats', '', p.accessToken)).items).toContainEqual({ key: 'matches', value: '1' });
    expectError(await bump('/stats/matches', {}, { token: p.accessToken }), 403, 'forbidden');
    expectError(await bump('/stats/matches', { by: 0 }), 400, 'invalid-request', 'body.by');
    // Each server key reads its own environment's counters.
    expect((await list('/stats', '', h.serverKeys['alpha-test-key'])).items).toEqual([]);
    await h.db('environment_stats').where({ key: 'matches' }).update({ value: INT64_MAX.toString() });
    expectError(await bump('/stats/matches'), 400, 'invalid-request', 'body.by');
    expect(await valueOf('/stats', 'matches')).toBe(INT64_MAX.toString());
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
