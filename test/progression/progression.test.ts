/**
 * Progression over real HTTP (spec §2 SkillTree, Unlock, XP entry; §3 Skill node; §4 Progression;
 * docs/progression.md): each route answered, the status and body of each refusal (the routes'
 * schemas, credentials and `me`, another environment, the service switched off), pages and cursors:
 * - a player's skill trees and unlocking nodes: replays under an Idempotency-Key, parallel retried
 *   unlocks that must pay once and never go below zero, and a tree switched off (left out of the
 *   players' trees, its nodes `disabled`) and on again, which each process reads from its cache of
 *   committed rows;
 * - unlocks: PUT records (201 the first time, 200 with the first record after; of parallel PUTs of one
 *   key exactly one is 201), GET lists by key and pages, DELETE answers 204 whether or not held;
 * - XP: an Idempotency-Key required and a retry answering the first total, and concurrent retried
 *   additions (Jepsen-style): every total is the sum of the additions acknowledged, each key added once.
 * The rules themselves (unlockable nodes, charges and price rules, `locked`, who may unlock, unlocks
 * kept once, XP's ceiling, a player's deletion, what the SkillTree kind refuses) are held on core's
 * services in test/progression/rules.test.ts.
 */
import { random, sendAsPatterned, type Operation } from '../economy/jepsen-model';
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { skillTree, standardManifests, projectWithout } from '../support/manifests';
import { GAME_ENV, permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { combatTree, gameUnlockingSkillNodes, secretTree } from '../support/fixtures/progression';
import { reconcileDocument } from '../support/reconcile';

jest.setTimeout(60_000);

/** A tree switched off and on by the tests of `enabled`. */
function magic(enabled: boolean) {
  return skillTree('magic', {
    environment: GAME_ENV,
    name: 'Magic',
    enabled,
    nodes: [
      { key: 'spark', name: 'Spark', prices: [{ currencyKey: 'gold', amount: 5 }] },
      { key: 'flame', name: 'Flame', parents: ['spark'] },
    ],
  });
}

const content = [
  ...permanentAndSeason1Realms(),
  ...shopCurrencies(),
  combatTree(),
  secretTree(),
  magic(true),
  // Roots for the race below: each costs 30 gold.
  skillTree('race', {
    environment: GAME_ENV,
    name: 'Race',
    nodes: Array.from({ length: 6 }, (_, i) => ({ key: `race.${i}`, name: `R${i}`, prices: [{ currencyKey: 'gold', amount: 30 }] })),
  }),
  ...gameUnlockingSkillNodes(),
];

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `k-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('noprog', 'progression'), ...content] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const ok = <T = any>(reply: Reply<T>): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.anything() });
  return reply.body;
};
const player = async (subject: string) => signIn(h.base, key, subject);
const unlock = (playerId: string, node: string, body: Record<string, unknown> = {}, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/skill-nodes/${node}/unlock`, {
    token: opts.token ?? key,
    body,
    headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {},
  });
const credit = async (playerId: string, currencyKey: string, amount: number, extra: Record<string, unknown> = {}) =>
  ok(
    await call(h.base, 'POST', `/players/${playerId}/currencies/${currencyKey}/credit`, {
      token: key,
      body: { amount, reason: 'setup', ...extra },
      headers: { 'Idempotency-Key': newKey() },
    }),
  );
const balances = async (playerId: string, inventory = 'account') =>
  Object.fromEntries(
    (
      ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/balances`, { token: key })).items as { currencyKey: string; amount: number }[]
    ).map((b) => [b.currencyKey, b.amount]),
  );
const unlockedNodes = async (playerId: string) =>
  (await h.db('player_skill_nodes').where({ player_id: playerId }).orderBy('node_key')).map((r) => r.node_key as string);
const ledger = async (playerId: string) => h.db('ledger_entries').where({ player_id: playerId }).orderBy('id');
async function snapshot(playerId: string) {
  return { balances: await balances(playerId), nodes: await unlockedNodes(playerId), ledger: await ledger(playerId) };
}
const flags = (tree: { nodes: { key: string; unlocked: boolean; unlockable: boolean }[] }) =>
  Object.fromEntries(tree.nodes.map((n) => [n.key, `${n.unlocked ? 'unlocked' : '-'}/${n.unlockable ? 'unlockable' : '-'}`]));

describe("a player's skill trees", () => {
  test("a player's token leaves hidden trees out (not-found by key); a server key's pages hold them, by key", async () => {
    const p = await player('hidden');
    const mine = ok(await call(h.base, 'GET', '/players/me/skill-trees', { token: p.accessToken }));
    expect(mine.items.map((t: any) => t.key)).toEqual(['combat', 'magic', 'race']);
    const server = ok(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees?limit=2`, { token: key }));
    expect(server.items.map((t: any) => t.key)).toEqual(['combat', 'magic']);
    const rest = ok(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees?limit=2&cursor=${encodeURIComponent(server.next)}`, { token: key }));
    expect(rest.items.map((t: any) => t.key)).toEqual(['race', 'secret']);
    expectError(await call(h.base, 'GET', '/players/me/skill-trees/secret', { token: p.accessToken }), 404, 'not-found');
    expect(ok(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees/secret`, { token: key })).hidden).toBe(true);
  });

  test('refusals: unknown tree, unknown player, another environment, an id with a player token, bad key, the service off', async () => {
    const p = await player('tree-refusals');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees/nope`, { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/players/nobody/skill-trees', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees`, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees/-bad`, { token: key }), 400, 'invalid-request', 'path.treeKey');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees?hidden=1`, { token: key }), 400, 'invalid-request', 'query.hidden');
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'noprog');
    expectError(await call(h.base, 'GET', '/players/me/skill-trees', { token: q.accessToken }), 403, 'service-disabled');
  });
});

describe('POST /players/:playerId/skill-nodes/:nodeKey/unlock', () => {
  test('refusals: unknown node, unknown player, a player naming an id, bad body, the service off, another environment; nothing changes', async () => {
    const p = await player('unlock-refusals');
    await credit(p.player.id, 'gold', 100);
    const before = await snapshot(p.player.id);
    expectError(await unlock(p.player.id, 'nope'), 404, 'not-found');
    expectError(await unlock(p.player.id, 'free', { realmId: 'no-such-realm' }), 404, 'not-found');
    expectError(await unlock('nobody', 'slash'), 404, 'not-found');
    expectError(await unlock(p.player.id, 'slash', {}, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await unlock(p.player.id, 'slash', {}, { token: p.accessToken }), 403, 'forbidden');
    // A game whose skill trees the game itself unlocks: its players' own unlocks are forbidden too.
    const house = await signIn(h.base, h.serverKeys['house-live-key'], 'house-player');
    expectError(await unlock('me', 'house.root', {}, { token: house.accessToken }), 403, 'forbidden');
    expectError(await unlock(p.player.id, '-bad'), 400, 'invalid-request', 'path.nodeKey');
    expectError(await unlock(p.player.id, 'slash', { colour: 'red' }), 400, 'invalid-request', 'body.colour');
    expectError(await unlock(p.player.id, 'slash', { allowances: { energy: -1 } }), 400, 'invalid-request');
    expectError(await unlock(p.player.id, 'slash', {}, { idem: 'x'.repeat(129) }), 400, 'invalid-request', 'header.Idempotency-Key');
    expect(await snapshot(p.player.id)).toEqual(before);
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'noprog-unlock');
    expectError(await unlock(q.player.id, 'slash', {}, { token: h.serverKeys['noprog-live-key'] }), 403, 'service-disabled');
  });

  test('under an Idempotency-Key a retry answers the first unlock (Idempotent-Replayed); the key for another node is idempotency-conflict', async () => {
    const p = await player('unlock-idem');
    await credit(p.player.id, 'gold', 100);
    const idem = newKey();
    const first = await unlock(p.player.id, 'slash', {}, { idem });
    const again = await unlock(p.player.id, 'slash', {}, { idem });
    expect(again.body).toEqual(first.body);
    expect(again.body.alreadyUnlocked).toBe(false);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expectError(await unlock(p.player.id, 'free', {}, { idem }), 409, 'idempotency-conflict');
    expect(await balances(p.player.id)).toEqual({ gold: 90 });
  });
});

describe('races', () => {
  test('parallel retried unlocks of one node (with and without Idempotency-Keys): paid exactly once', async () => {
    for (let round = 0; round < 3; round++) {
      const p = await player(`race-once-${round}`);
      await credit(p.player.id, 'gold', 100);
      const keys = [newKey(), newKey(), newKey()];
      const replies = await Promise.all(Array.from({ length: 18 }, (_, i) => unlock(p.player.id, 'slash', {}, i % 2 === 0 ? { idem: keys[i % 3] } : {})));
      for (const r of replies) expect(r.status).toBe(200);
      const paying = replies.filter((r) => r.body.alreadyUnlocked === false);
      // Every reply that charged names the same one ledger entry (the replays of its key included).
      expect(new Set(paying.map((r) => r.body.charges[0].transactionId)).size).toBe(1);
      expect(await balances(p.player.id)).toEqual({ gold: 90 });
      expect((await ledger(p.player.id)).filter((e) => e.reason === 'skill-node')).toHaveLength(1);
      expect(await unlockedNodes(p.player.id)).toEqual(['slash']);
    }
  });

  test('parallel unlocks of several nodes the balance cannot all pay: never below zero, each success charged once, the rest refused', async () => {
    const p = await player('race-zero');
    await credit(p.player.id, 'gold', 100); // pays 3 of the 6 race nodes (30 each)
    const replies = await Promise.all(
      Array.from({ length: 24 }, (_, i) => unlock(p.player.id, `race.${i % 6}`, {}, i < 12 ? { idem: `race-zero-${i % 6}` } : {})),
    );
    for (const r of replies) expect([200, 409]).toContain(r.status);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.error).toBe('insufficient-balance');
    const unlocked = await unlockedNodes(p.player.id);
    expect(unlocked).toHaveLength(3);
    expect(await balances(p.player.id)).toEqual({ gold: 10 });
    const entries = (await ledger(p.player.id)).filter((e) => e.reason === 'skill-node');
    expect(entries.map((e) => e.reference).sort()).toEqual(unlocked.map((k) => `skill-node:${k}`));
    expect(entries.every((e) => Number(e.balance_after) >= 0)).toBe(true);
  });
});

describe('a switched-off tree (SkillTree spec.enabled false)', () => {
  const switchMagic = async (enabled: boolean) => reconcileDocument(h.db, h.core.bus, magic(enabled));
  const treeKeys = async (token: string, playerId = 'me') =>
    ok(await call(h.base, 'GET', `/players/${playerId}/skill-trees`, { token })).items.map((t: any) => t.key);

  afterEach(async () => {
    await switchMagic(true);
  });

  test('is listed by the definitions with enabled: false, left out of every player list, not-found by key, and its nodes are disabled; nothing is charged', async () => {
    const p = await player('switched-off');
    await credit(p.player.id, 'gold', 100);
    ok(await unlock('me', 'spark', {}, { token: p.accessToken }));
    expect((await switchMagic(false)).action).toBe('updated');

    const definitions = ok(await call(h.base, 'GET', '/definitions/skill-trees', { token: key })).items;
    expect(definitions.find((t: any) => t.key === 'magic')).toMatchObject({ key: 'magic', enabled: false, hidden: false });
    expect(definitions.find((t: any) => t.key === 'combat')).toMatchObject({ enabled: true });
    expect(await treeKeys(p.accessToken)).toEqual(['combat', 'race']);
    expect(await treeKeys(key, p.player.id)).toEqual(['combat', 'race', 'secret']);
    expectError(await call(h.base, 'GET', '/players/me/skill-trees/magic', { token: p.accessToken }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees/magic`, { token: key }), 404, 'not-found');

    // Its nodes: refused before anything is claimed or charged, by either credential, under a key or not.
    const before = await snapshot(p.player.id);
    const refused = expectError(await unlock(p.player.id, 'flame', {}, { idem: newKey() }), 409, 'disabled');
    expect(refused.details).toEqual({ nodeKey: 'flame' });
    expect(refused.message).toContain('magic');
    expectError(await unlock('me', 'flame', {}, { token: p.accessToken }), 409, 'disabled');
    expectError(await unlock('me', 'spark', {}, { token: p.accessToken }), 409, 'disabled');
    expect(await snapshot(p.player.id)).toEqual(before);
  });

  test('switched on again: listed, and what was unlocked before stays unlocked; its nodes unlock again', async () => {
    const p = await player('switched-back');
    await credit(p.player.id, 'gold', 100);
    ok(await unlock(p.player.id, 'spark'));
    await switchMagic(false);
    expectError(await unlock(p.player.id, 'flame'), 409, 'disabled');
    expect((await switchMagic(true)).action).toBe('updated');
    expect(await treeKeys(p.accessToken)).toEqual(['combat', 'magic', 'race']);
    expect(flags(ok(await call(h.base, 'GET', '/players/me/skill-trees/magic', { token: p.accessToken })))).toEqual({
      spark: 'unlocked/-',
      flame: '-/unlockable',
    });
    expect(ok(await unlock(p.player.id, 'flame'))).toMatchObject({ nodeKey: 'flame', alreadyUnlocked: false });
  });
});

const put = (playerId: string, unlock: string, body?: unknown, token = key) => call(h.base, 'PUT', `/players/${playerId}/unlocks/${unlock}`, { token, body });
async function list(playerId: string, query = '', token = key) {
  const reply = await call(h.base, 'GET', `/players/${playerId}/unlocks${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: { key: string; source: string; unlockedAt: string }[]; next: string | null };
}

describe('PUT /players/:playerId/unlocks/:key', () => {
  test('201 with the unlock the first time; 200 with the first record after; with no body or an empty one', async () => {
    const p = await signIn(h.base, key, 'unlocker');
    const first = await put(p.player.id, 'chapter.1', { source: 'quest:intro' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ key: 'chapter.1', source: 'quest:intro', unlockedAt: expect.any(String) });
    expect(Math.abs(Date.parse(first.body.unlockedAt) - Date.now())).toBeLessThan(60_000);
    const again = await put(p.player.id, 'chapter.1', { source: 'something-else' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // No body, or an empty one: the source is `server`.
    expect((await put(p.player.id, 'mode_hard')).body).toMatchObject({ key: 'mode_hard', source: 'server' });
    expect((await put(p.player.id, 'mode:ranked', {})).body).toMatchObject({ key: 'mode:ranked', source: 'server' });
    expect((await list(p.player.id)).items.map((u) => [u.key, u.source])).toEqual([
      ['chapter.1', 'quest:intro'],
      ['mode:ranked', 'server'],
      ['mode_hard', 'server'],
    ]);
  });

  test('parallel PUTs of one key: exactly one 201, every answer the same first record', async () => {
    const p = await signIn(h.base, key, 'racer');
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => put(p.player.id, `race.${round}`, { source: `client-${i}` })));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(11);
      const winner = replies.find((r) => r.status === 201)!.body;
      for (const r of replies) expect(r.body).toEqual(winner);
    }
    expect(await h.db('player_unlocks').where({ player_id: p.player.id }).count({ n: '*' })).toEqual([{ n: '5' }]);
  });

  test('refusals: bad key or source, unknown body field, a player token, an unknown player, another environment, the service off', async () => {
    const p = await signIn(h.base, key, 'refused-unlocker');
    expectError(await put(p.player.id, '-starts-badly'), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'a'.repeat(129)), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'has%20space'), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'ok', { source: 'two words' }), 400, 'invalid-request', 'body.source');
    expectError(await put(p.player.id, 'ok', { source: '' }), 400, 'invalid-request', 'body.source');
    expectError(await put(p.player.id, 'ok', { source: 'x', when: 'now' }), 400, 'invalid-request', 'body.when');
    expectError(await put('me', 'ok', undefined, p.accessToken), 403, 'forbidden');
    expectError(await put('no-such-player', 'ok'), 404, 'not-found');
    expectError(await put('me', 'ok'), 404, 'not-found');
    expectError(await put(p.player.id, 'ok', undefined, h.serverKeys['alpha-test-key']), 404, 'not-found');
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'no-progression');
    expectError(await put(q.player.id, 'ok', undefined, h.serverKeys['noprog-live-key']), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/players/me/unlocks', { token: q.accessToken }), 403, 'service-disabled');
    // Nothing was recorded by any of them.
    expect(await h.db('player_unlocks').whereIn('player_id', [p.player.id, q.player.id]).count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});

describe('GET /players/:playerId/unlocks', () => {
  let playerId: string;
  let token: string;
  beforeAll(async () => {
    const p = await signIn(h.base, key, 'lister');
    playerId = p.player.id;
    token = p.accessToken;
    for (const k of ['zone.b', 'zone.a', 'zoneXa', 'zone_a', 'zone.a.1', 'alpha', '9lives']) expect((await put(playerId, k)).status).toBe(201);
  });

  test('by key in byte order, with a server key or as `me` with the player token', async () => {
    const all = ['9lives', 'alpha', 'zone.a', 'zone.a.1', 'zone.b', 'zoneXa', 'zone_a'];
    expect((await list(playerId)).items.map((u) => u.key)).toEqual(all);
    expect((await list('me', '', token)).items.map((u) => u.key)).toEqual(all);
  });

  test('pages; a cursor is bound to its player and prefix', async () => {
    const first = await list(playerId, '?prefix=zone&limit=2');
    expect(first.items.map((u) => u.key)).toEqual(['zone.a', 'zone.a.1']);
    const second = await list(playerId, `?prefix=zone&limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(second.items.map((u) => u.key)).toEqual(['zone.b', 'zoneXa']);
    const third = await list(playerId, `?prefix=zone&limit=2&cursor=${encodeURIComponent(second.next!)}`);
    expect(third).toMatchObject({ items: [{ key: 'zone_a' }], next: null });
    expectError(
      await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=zone.&cursor=${encodeURIComponent(first.next!)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
    const other = await signIn(h.base, key, 'lister-2');
    expectError(
      await call(h.base, 'GET', `/players/${other.player.id}/unlocks?prefix=zone&cursor=${encodeURIComponent(first.next!)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test('refusals: naming an id with a player token, an unknown player, another environment, a bad prefix', async () => {
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks`, { token }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players/nobody/unlocks', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=a%25`, { token: key }), 400, 'invalid-request', 'query.prefix');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=`, { token: key }), 400, 'invalid-request', 'query.prefix');
  });
});

describe('DELETE /players/:playerId/unlocks/:key', () => {
  test('204 whether or not held; afterwards a PUT records it anew (201)', async () => {
    const p = await signIn(h.base, key, 'deleter');
    const first = (await put(p.player.id, 'gone.soon', { source: 'first' })).body;
    const del = await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/gone.soon`, { token: key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await list(p.player.id)).items).toEqual([]);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/gone.soon`, { token: key })).status).toBe(204);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/never.held`, { token: key })).status).toBe(204);
    const again = await put(p.player.id, 'gone.soon', { source: 'second' });
    expect(again.status).toBe(201);
    expect(again.body.source).toBe('second');
    expect(again.body.unlockedAt >= first.unlockedAt).toBe(true);
  });

  test('refusals: a player token, an unknown player, another environment, a bad key', async () => {
    const p = await signIn(h.base, key, 'delete-refused');
    await put(p.player.id, 'kept');
    expectError(await call(h.base, 'DELETE', '/players/me/unlocks/kept', { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'DELETE', '/players/nobody/unlocks/kept', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/kept`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/.dot`, { token: key }), 400, 'invalid-request', 'path.key');
    expect((await list(p.player.id)).items.map((u) => u.key)).toEqual(['kept']);
  });
});

const add = (playerId: string, body: unknown, opts: { token?: string; idem?: string | null } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/xp`, {
    token: opts.token ?? key,
    body,
    headers: opts.idem === null ? {} : { 'Idempotency-Key': opts.idem ?? newKey() },
  });
const xpRows = async (playerId: string) => (await h.db('player_xp').where({ player_id: playerId }).orderBy('track')).map((r) => [r.track, Number(r.xp)]);

describe('XP', () => {
  test('adds to a track (default `default`), answers its new total; GET lists the tracks by name with either credential', async () => {
    const p = await signIn(h.base, key, 'xp-basic');
    expect((await add(p.player.id, { amount: 100 })).body).toEqual({ track: 'default', xp: 100 });
    expect((await add(p.player.id, { amount: 50 })).body).toEqual({ track: 'default', xp: 150 });
    expect((await add(p.player.id, { amount: 7, track: 'crafting' })).body).toEqual({ track: 'crafting', xp: 7 });
    const mine = await call(h.base, 'GET', '/players/me/xp', { token: p.accessToken });
    expect(mine.body).toEqual({
      items: [
        { track: 'crafting', xp: 7 },
        { track: 'default', xp: 150 },
      ],
      next: null,
    });
    const page = await call(h.base, 'GET', `/players/${p.player.id}/xp?limit=1`, { token: key });
    expect(page.body.items).toEqual([{ track: 'crafting', xp: 7 }]);
    const rest = await call(h.base, 'GET', `/players/${p.player.id}/xp?limit=1&cursor=${encodeURIComponent(page.body.next)}`, { token: key });
    expect(rest.body).toEqual({ items: [{ track: 'default', xp: 150 }], next: null });
  });

  test('a retry under the same Idempotency-Key answers the first total and adds nothing; the key for another body is idempotency-conflict', async () => {
    const p = await signIn(h.base, key, 'xp-idem');
    const idem = newKey();
    const first = await add(p.player.id, { amount: 10 }, { idem });
    await add(p.player.id, { amount: 5 });
    const again = await add(p.player.id, { amount: 10 }, { idem });
    expect(again.body).toEqual(first.body);
    expect(again.body).toEqual({ track: 'default', xp: 10 });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expectError(await add(p.player.id, { amount: 11 }, { idem }), 409, 'idempotency-conflict');
    expect(await xpRows(p.player.id)).toEqual([['default', 15]]);
  });

  test('refusals change nothing: no key, bad amounts and tracks, unknown fields, a player token, unknown player, another environment, the service off; the 2^53-1 ceiling', async () => {
    const p = await signIn(h.base, key, 'xp-refusals');
    await add(p.player.id, { amount: 1 });
    expectError(await add(p.player.id, { amount: 1 }, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
    for (const amount of [0, -1, 1.5, 1_000_000_001, '3']) expectError(await add(p.player.id, { amount }), 400, 'invalid-request', 'body.amount');
    expectError(await add(p.player.id, {}), 400, 'invalid-request', 'body.amount');
    expectError(await add(p.player.id, { amount: 1, track: 'two words' }), 400, 'invalid-request', 'body.track');
    expectError(await add(p.player.id, { amount: 1, level: 3 }), 400, 'invalid-request', 'body.level');
    expectError(await add('me', { amount: 1 }, { token: p.accessToken }), 403, 'forbidden');
    expectError(await add('nobody', { amount: 1 }), 404, 'not-found');
    expectError(await add(p.player.id, { amount: 1 }, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/xp`, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players/nobody/xp', { token: key }), 404, 'not-found');
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'xp-noprog');
    expectError(await add(q.player.id, { amount: 1 }, { token: h.serverKeys['noprog-live-key'] }), 403, 'service-disabled');
    expect(await xpRows(p.player.id)).toEqual([['default', 1]]);
    // Just under the ceiling: one more than fits is refused and adds nothing.
    await h
      .db('player_xp')
      .where({ player_id: p.player.id })
      .update({ xp: Number.MAX_SAFE_INTEGER - 5 });
    expectError(await add(p.player.id, { amount: 6 }), 400, 'invalid-request', 'body.amount');
    expect((await add(p.player.id, { amount: 5 })).body).toEqual({ track: 'default', xp: Number.MAX_SAFE_INTEGER });
  });

  test('concurrent additions retried at random: each total is the sum of the keys acknowledged, each added once, every retry answering the first total', async () => {
    const seed = Number(process.env.JEPSEN_SEED ?? Date.now() % 1_000_000);
    const rand = random(seed);
    const players = [(await signIn(h.base, key, `xp-j-${seed}-0`)).player.id, (await signIn(h.base, key, `xp-j-${seed}-1`)).player.id];
    type Answer = { status: number; body: any };
    const ops: (Operation<Answer> & { track: string; amount: number })[] = Array.from({ length: 240 }, (_, i) => {
      const amount = 1 + Math.floor(rand() * 1000);
      const track = rand() < 0.5 ? 'default' : 'pvp';
      return {
        key: `xp-j-${seed}-${i}`,
        playerId: players[Math.floor(rand() * 2)],
        currencyKey: '',
        kind: 'credit',
        change: amount,
        track,
        amount,
        body: { amount, track },
        pattern: (['once', 'race', 'later', 'both'] as const)[Math.floor(rand() * 4)],
        answers: [],
      };
    });
    const send = async (op: Operation<Answer>) => {
      const reply = await add(op.playerId, op.body, { idem: op.key });
      op.answers.push({ status: reply.status, body: reply.body });
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < ops.length) await sendAsPatterned(ops[next++], send, rand);
      }),
    );
    for (const op of ops) {
      expect(op.answers.map((a) => a.status)).toEqual(op.answers.map(() => 200));
      for (const a of op.answers) expect(a.body).toEqual(op.answers[0].body);
    }
    for (const playerId of players) {
      const expected = new Map<string, number>();
      for (const op of ops.filter((o) => o.playerId === playerId)) expected.set(op.track, (expected.get(op.track) ?? 0) + op.amount);
      expect(Object.fromEntries(await xpRows(playerId))).toEqual(Object.fromEntries(expected));
      // The totals answered for a track are distinct: no two keys were answered the same running total.
      const totals = ops.filter((o) => o.playerId === playerId).map((o) => `${o.track}:${o.answers[0].body.xp}`);
      expect(new Set(totals).size).toBe(totals.length);
    }
  });
});
