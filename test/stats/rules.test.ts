/**
 * The stats' rules (spec §2 Stat, §4 Stats; docs/progression.md "Stats"), called straight on core's
 * stat service with no route in between, each test in a transaction rolled back after it
 * (test/support/domain.ts): a player's and the environment's counters, per realm and across every
 * realm, `by` of either sign (default 1), values as decimal strings past 2^53, a move past the 64-bit
 * range refused (never wrapped) and changing nothing, every other refusal, and a player's deletion.
 * In a transaction an increment is one statement of its own; the combining of parallel increments on
 * the pool is held by the HTTP suites.
 *
 * The HTTP side (statuses, the routes' schemas, credentials and `me`, cursors, the service switched
 * off) and the concurrent retried increments are in test/stats/stats.test.ts and
 * test/stats/increment-races.test.ts.
 */
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { realm, standardManifests } from '../support/manifests';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

const suite = domainSuite({
  manifests: [
    ...standardManifests(),
    realm('permanent', { environment: 'alpha-live', number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
    realm('season-1', { environment: 'alpha-live', key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  ],
});
type Player = { id: string; env: EnvironmentContext };
type Ask = Parameters<typeof suite.core.stats.increment>[4];
const live = () => suite.player('alpha-live');
const environment = () => suite.environment('alpha-live');

const bump = async (p: Player, key: string, ask: Ask = {}) => (await suite.core.stats.increment(suite.db, p.env, { playerId: p.id }, key, ask)).value;
const bumpEnvironment = async (key: string, ask: Ask = {}) => (await suite.core.stats.increment(suite.db, await environment(), null, key, ask)).value;
const list = (p: Player, q = {}) => suite.core.stats.list(suite.db, p.env, { playerId: p.id }, q);
const listEnvironment = async (q = {}, env?: EnvironmentContext) => suite.core.stats.list(suite.db, env ?? (await environment()), null, q);
const valueOf = async (p: Player | null, key: string) =>
  ((p ? await list(p) : await listEnvironment()).items.find((s) => s.key === key)?.value ?? null) as string | null;

describe("a player's stats", () => {
  test('increments by 1 by default, by any whole number of either sign; per realm, and across every realm when none is named', async () => {
    const p = await live();
    expect(await bump(p, 'kills')).toBe('1');
    expect(await bump(p, 'kills', { by: 9 })).toBe('10');
    expect(await bump(p, 'kills', { by: -3, realmId: null })).toBe('7');
    expect(await bump(p, 'kills', { by: 5, realmId: 's1' })).toBe('5');
    expect(await bump(p, 'deaths', { by: -2, realmId: 'permanent' })).toBe('-2');
    expect(await list(p)).toEqual({
      items: [
        { key: 'deaths', value: '-2' },
        { key: 'kills', value: '12' },
      ],
      next: null,
    });
    expect((await list(p, { realmId: 's1' })).items).toEqual([{ key: 'kills', value: '5' }]);
    expect((await list(p, { realmId: 'permanent' })).items).toEqual([{ key: 'deaths', value: '-2' }]);
  });

  test('64-bit: values past 2^53 as exact decimal strings; a move past the range is refused (invalid-request on by) and changes nothing', async () => {
    const p = await live();
    await bump(p, 'big', { by: Number.MAX_SAFE_INTEGER });
    await suite
      .db('player_stats')
      .where({ player_id: p.id, key: 'big' })
      .update({ value: (INT64_MAX - 10n).toString() });
    expect(await bump(p, 'big', { by: 10 })).toBe(INT64_MAX.toString());
    await suite.expectRefusal(() => bump(p, 'big'), 'invalid-request', 'by');
    expect(await valueOf(p, 'big')).toBe(INT64_MAX.toString());
    await bump(p, 'low', { by: -1 });
    await suite
      .db('player_stats')
      .where({ player_id: p.id, key: 'low' })
      .update({ value: (INT64_MIN + 1n).toString() });
    expect(await bump(p, 'low', { by: -1 })).toBe(INT64_MIN.toString());
    await suite.expectRefusal(() => bump(p, 'low', { by: -1 }), 'invalid-request', 'by');
    expect(await valueOf(p, 'low')).toBe(INT64_MIN.toString());
  });

  test('refusals change nothing: by 0, fractions, past 2^53-1; an unknown realm; an unknown player or one of another environment', async () => {
    const p = await live();
    await bump(p, 'k');
    for (const by of [0, 1.5, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2])
      await suite.expectRefusal(() => bump(p, 'k', { by }), 'invalid-request', 'by');
    await suite.expectRefusal(() => bump(p, 'k', { realmId: 'nope' }), 'not-found', 'realmId');
    await suite.expectRefusal(() => list(p, { realmId: 'nope' }), 'not-found', 'realmId');
    await suite.expectRefusal(() => bump({ ...p, id: 'nobody' }, 'k'), 'not-found', 'playerId');
    await suite.expectRefusal(() => list({ ...p, id: 'nobody' }), 'not-found', 'playerId');
    const elsewhere = await suite.environment('alpha-test');
    await suite.expectRefusal(() => bump({ ...p, env: elsewhere }, 'k'), 'not-found', 'playerId');
    expect(await list(p)).toEqual({ items: [{ key: 'k', value: '1' }], next: null });
  });
});

describe("the environment's stats", () => {
  test("per realm and across every realm; each realm's counter is one row; not a player's, nor another environment's", async () => {
    const p = await live();
    expect(await bumpEnvironment('matches')).toBe('1');
    expect(await bumpEnvironment('matches', { by: 4, realmId: 's1' })).toBe('4');
    expect((await listEnvironment()).items).toEqual([{ key: 'matches', value: '5' }]);
    expect((await listEnvironment({ realmId: 's1' })).items).toEqual([{ key: 'matches', value: '4' }]);
    await suite.expectRefusal(() => bumpEnvironment('matches', { by: 0 }), 'invalid-request', 'by');
    expect((await list(p)).items).toEqual([]);
    expect((await listEnvironment({}, await suite.environment('alpha-test'))).items).toEqual([]);
    const rows = await suite.db('environment_stats').where({ key: 'matches' }).orderBy('realm_key').select('realm_key', 'value');
    expect(rows).toEqual([
      { realm_key: '', value: '1' },
      { realm_key: 's1', value: '4' },
    ]);
  });

  test('past the 64-bit range: refused, nothing changed; back within it, answered', async () => {
    await bumpEnvironment('huge', { by: 1 });
    await suite
      .db('environment_stats')
      .where({ key: 'huge' })
      .update({ value: (INT64_MAX - 6n).toString() });
    expect(await bumpEnvironment('huge', { by: 5 })).toBe((INT64_MAX - 1n).toString());
    await suite.expectRefusal(() => bumpEnvironment('huge', { by: 2 }), 'invalid-request', 'by');
    expect(await valueOf(null, 'huge')).toBe((INT64_MAX - 1n).toString());
    expect(await bumpEnvironment('huge', { by: -Number.MAX_SAFE_INTEGER })).toBe((INT64_MAX - 1n - BigInt(Number.MAX_SAFE_INTEGER)).toString());
    await suite
      .db('environment_stats')
      .where({ key: 'huge' })
      .update({ value: (INT64_MIN + 1n).toString() });
    expect(await bumpEnvironment('huge', { by: -1 })).toBe(INT64_MIN.toString());
    await suite.expectRefusal(() => bumpEnvironment('huge', { by: -1 }), 'invalid-request', 'by');
    expect(await valueOf(null, 'huge')).toBe(INT64_MIN.toString());
  });
});

test("deleting a player takes their stats; the environment's counters keep what they counted", async () => {
  const p = await live();
  await bump(p, 'leaves', { by: 2 });
  await bumpEnvironment('leaves', { by: 2 });
  await suite.core.deletePlayer(suite.db, p.env, p.id);
  expect(await suite.db('player_stats').where({ player_id: p.id })).toEqual([]);
  expect(await valueOf(null, 'leaves')).toBe('2');
});
