/**
 * A player's skill trees and unlocking nodes (spec §2 SkillTree, §3 Skill node, §4 Progression;
 * docs/progression.md), over real HTTP: `unlocked` / `unlockable` as nodes are unlocked, hidden trees
 * left out for a player's token, the unlock's charges through the money engine (balance and consumed
 * currencies, account and realm ones, price rules), `alreadyUnlocked` with no charge, every refusal
 * (each changing nothing), replays under an Idempotency-Key, a game that unlocks its own nodes, item
 * use needing a skill node, parallel retried unlocks that must pay once and never go below zero, and
 * a tree switched off (left out of the players' trees, its nodes `disabled`) and on again.
 */
import { type AnyManifest, reconcileManifest, validateManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { currency, environment, itemType, project, realm, serverKey, skillTree, standardManifests, projectWithout } from '../support/manifests';

const env = 'alpha-live';
const coin = (name: string, spec: Record<string, unknown>) => currency(name, { environment: env, name, scope: 'account', kind: 'balance', ...spec });

/** A tree switched off and on by the tests of `enabled`. */
function magic(enabled: boolean) {
  return skillTree('magic', {
    environment: env,
    name: 'Magic',
    enabled,
    nodes: [
      { key: 'spark', name: 'Spark', prices: [{ currencyKey: 'gold', amount: 5 }] },
      { key: 'flame', name: 'Flame', parents: ['spark'] },
    ],
  });
}

const content = [
  realm('permanent', { environment: env, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  coin('gold', {}),
  coin('gems', {}),
  coin('energy', { kind: 'consumed' }),
  coin('tokens', { scope: 'realm' }),
  coin('frozen', { enabled: false }),
  skillTree('combat', {
    environment: env,
    name: 'Combat',
    nodes: [
      { key: 'slash', name: 'Slash', prices: [{ currencyKey: 'gold', amount: 10 }] },
      {
        key: 'cleave',
        name: 'Cleave',
        parents: ['slash'],
        priceRule: 'any',
        prices: [
          { currencyKey: 'gold', amount: 50 },
          { currencyKey: 'gems', amount: 2 },
        ],
      },
      {
        key: 'whirl',
        name: 'Whirl',
        parents: ['slash', 'cleave'],
        requires: ['chapter.2'],
        prices: [
          { currencyKey: 'gold', amount: 5 },
          { currencyKey: 'energy', amount: 3 },
        ],
      },
      { key: 'focus', name: 'Focus', prices: [{ currencyKey: 'tokens', amount: 4 }] },
      { key: 'free', name: 'Free' },
      { key: 'ghostly', name: 'Ghostly', prices: [{ currencyKey: 'ghost', amount: 1 }] },
      { key: 'frosty', name: 'Frosty', prices: [{ currencyKey: 'frozen', amount: 1 }] },
    ],
  }),
  skillTree('secret', { environment: env, name: 'Secret', hidden: true, nodes: [{ key: 'vanish', name: 'Vanish' }] }),
  magic(true),
  // Roots for the race below: each costs 30 gold.
  skillTree('race', {
    environment: env,
    name: 'Race',
    nodes: Array.from({ length: 6 }, (_, i) => ({ key: `race.${i}`, name: `R${i}`, prices: [{ currencyKey: 'gold', amount: 30 }] })),
  }),
  itemType('blade', { environment: env, name: 'Blade', category: 'weapon', ownership: 'counted', usable: true, requires: ['slash', 'chapter.1'] }),
  // A game of the service's own whose skill trees the game itself unlocks.
  project('house', { progression: { skillNodesUnlockedBy: 'game' } }),
  environment('house-live', 'house'),
  serverKey('house-live-key', 'house-live'),
  skillTree('house-tree', { environment: 'house-live', name: 'House', nodes: [{ key: 'house.root', name: 'Root' }] }),
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
  test('each node with unlocked and unlockable (not unlocked and every parent is), as nodes are unlocked', async () => {
    const p = await player('trees');
    await credit(p.player.id, 'gold', 1000);
    const tree = ok(await call(h.base, 'GET', '/players/me/skill-trees/combat', { token: p.accessToken }));
    expect(tree).toEqual({
      key: 'combat',
      name: 'Combat',
      description: '',
      hidden: false,
      nodes: expect.arrayContaining([
        {
          key: 'slash',
          treeKey: 'combat',
          name: 'Slash',
          description: '',
          icon: null,
          priceRule: 'all',
          parents: [],
          prices: [{ currencyKey: 'gold', amount: 10 }],
          unlocked: false,
          unlockable: true,
        },
      ]),
    });
    expect(flags(tree)).toEqual({
      slash: '-/unlockable',
      cleave: '-/-',
      whirl: '-/-',
      focus: '-/unlockable',
      free: '-/unlockable',
      ghostly: '-/unlockable',
      frosty: '-/unlockable',
    });
    ok(await unlock('me', 'slash', {}, { token: p.accessToken }));
    expect(flags(ok(await call(h.base, 'GET', `/players/${p.player.id}/skill-trees/combat`, { token: key })))).toMatchObject({
      slash: 'unlocked/-',
      cleave: '-/unlockable',
      whirl: '-/-',
    });
    ok(await unlock('me', 'cleave', { payWith: 'gold' }, { token: p.accessToken }));
    expect(flags(ok(await call(h.base, 'GET', '/players/me/skill-trees/combat', { token: p.accessToken })))).toMatchObject({
      slash: 'unlocked/-',
      cleave: 'unlocked/-',
      whirl: '-/unlockable',
    });
  });

  test("hidden trees are left out for a player's token (and not-found by key); a server key sees them; pages by key", async () => {
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
  test('charges the price through the money engine and records the node; again: alreadyUnlocked, nothing charged', async () => {
    const p = await player('unlock-basic');
    await credit(p.player.id, 'gold', 100);
    const account = ok(await call(h.base, 'GET', `/players/${p.player.id}/inventories/account`, { token: key }));
    const first = ok(await unlock('me', 'slash', {}, { token: p.accessToken }));
    expect(first).toEqual({
      nodeKey: 'slash',
      alreadyUnlocked: false,
      charges: [{ transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gold', amount: -10, balanceAfter: 90, replayed: false }],
    });
    const entry = (await ledger(p.player.id)).find((e) => String(e.id) === first.charges[0].transactionId);
    expect(entry).toMatchObject({ reason: 'skill-node', reference: 'skill-node:slash', amount: '-10' });
    expect(ok(await unlock(p.player.id, 'slash'))).toEqual({ nodeKey: 'slash', alreadyUnlocked: true, charges: [] });
    expect(await balances(p.player.id)).toEqual({ gold: 90 });
    // A node without prices charges nothing.
    expect(ok(await unlock(p.player.id, 'free'))).toEqual({ nodeKey: 'free', alreadyUnlocked: false, charges: [] });
    expect(await unlockedNodes(p.player.id)).toEqual(['free', 'slash']);
  });

  test('locked (details.missing) until every parent is unlocked, then until the unlocks the node requires are held; nothing charged', async () => {
    const p = await player('unlock-locked');
    await credit(p.player.id, 'gold', 1000);
    const before = await snapshot(p.player.id);
    expect(expectError(await unlock(p.player.id, 'whirl', { allowances: { energy: 10 } }), 409, 'locked').details).toEqual({
      nodeKey: 'whirl',
      missing: ['slash', 'cleave', 'chapter.2'],
    });
    expect(expectError(await unlock(p.player.id, 'cleave', { payWith: 'gold' }), 409, 'locked').details).toEqual({ nodeKey: 'cleave', missing: ['slash'] });
    expect(await snapshot(p.player.id)).toEqual(before);
    ok(await unlock(p.player.id, 'slash'));
    ok(await unlock(p.player.id, 'cleave', { payWith: 'gold' }));
    expect(expectError(await unlock(p.player.id, 'whirl', { allowances: { energy: 10 } }), 409, 'locked').details).toEqual({
      nodeKey: 'whirl',
      missing: ['chapter.2'],
    });
    expect((await call(h.base, 'PUT', `/players/${p.player.id}/unlocks/chapter.2`, { token: key })).status).toBe(201);
    const whirl = ok(await unlock(p.player.id, 'whirl', { allowances: { energy: 10 } }));
    expect(whirl.charges.map((c: any) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
      ['energy', 3, 3],
      ['gold', -5, 935],
    ]);
  });

  test('price rules and currencies: payWith required for any and naming one of the prices; a consumed currency needs a server’s allowance; a realm currency is paid in the realm', async () => {
    const p = await player('unlock-prices');
    await credit(p.player.id, 'gold', 100);
    await credit(p.player.id, 'gems', 1);
    ok(await unlock(p.player.id, 'slash'));
    const before = await snapshot(p.player.id);
    expectError(await unlock(p.player.id, 'cleave'), 400, 'invalid-request', 'body.payWith');
    expectError(await unlock(p.player.id, 'cleave', { payWith: 'energy' }), 400, 'invalid-request', 'body.payWith');
    expect(expectError(await unlock(p.player.id, 'cleave', { payWith: 'gems' }), 409, 'insufficient-balance').details).toEqual({
      currencyKey: 'gems',
      held: 1,
      requested: 2,
    });
    expect(expectError(await unlock(p.player.id, 'ghostly'), 404, 'not-found').message).toMatch(/ghost, which is not defined/);
    expect(expectError(await unlock(p.player.id, 'frosty'), 409, 'disabled').details).toEqual({ nodeKey: 'frosty', currencyKey: 'frozen' });
    expect(await snapshot(p.player.id)).toEqual(before);

    // whirl needs energy (consumed): allowance required, from a server only, and held to.
    const q = await player('unlock-consumed');
    await credit(q.player.id, 'gold', 1000);
    ok(await unlock(q.player.id, 'slash'));
    ok(await unlock(q.player.id, 'cleave', { payWith: 'gold' }));
    expect((await call(h.base, 'PUT', `/players/${q.player.id}/unlocks/chapter.2`, { token: key })).status).toBe(201);
    const qBefore = await snapshot(q.player.id);
    expect(expectError(await unlock(q.player.id, 'whirl'), 400, 'invalid-request', 'body.allowances').details.currencyKey).toBe('energy');
    expectError(await unlock('me', 'whirl', { allowances: { energy: 10 } }, { token: q.accessToken }), 403, 'forbidden');
    expect(expectError(await unlock(q.player.id, 'whirl', { allowances: { energy: 2 } }), 409, 'allowance-exceeded').details).toEqual({
      currencyKey: 'energy',
      held: 0,
      requested: 3,
      allowance: 2,
    });
    expect(await snapshot(q.player.id)).toEqual(qBefore);
    ok(await unlock(q.player.id, 'whirl', { allowances: { energy: 3 } }));

    // focus is priced in a realm currency: paid from the current realm, or the realm named.
    const r = await player('unlock-realm');
    await credit(r.player.id, 'tokens', 4, { realmId: 'permanent' });
    expect(expectError(await unlock(r.player.id, 'focus'), 409, 'insufficient-balance').details).toMatchObject({ currencyKey: 'tokens', held: 0 });
    expectError(await unlock(r.player.id, 'focus', { realmId: 'no-such-realm' }), 404, 'not-found');
    const focus = ok(await unlock(r.player.id, 'focus', { realmId: 'permanent' }));
    expect(focus.charges.map((c: any) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['tokens', -4, 0]]);
  });

  test('refusals: unknown node, unknown player, a player naming an id, bad body, the service off, another environment; nothing changes', async () => {
    const p = await player('unlock-refusals');
    await credit(p.player.id, 'gold', 100);
    const before = await snapshot(p.player.id);
    expectError(await unlock(p.player.id, 'nope'), 404, 'not-found');
    expectError(await unlock(p.player.id, 'free', { realmId: 'no-such-realm' }), 404, 'not-found');
    expectError(await unlock('nobody', 'slash'), 404, 'not-found');
    expectError(await unlock(p.player.id, 'slash', {}, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await unlock(p.player.id, 'slash', {}, { token: p.accessToken }), 403, 'forbidden');
    expectError(await unlock(p.player.id, '-bad'), 400, 'invalid-request', 'path.nodeKey');
    expectError(await unlock(p.player.id, 'slash', { colour: 'red' }), 400, 'invalid-request', 'body.colour');
    expectError(await unlock(p.player.id, 'slash', { allowances: { energy: -1 } }), 400, 'invalid-request');
    expectError(await unlock(p.player.id, 'slash', {}, { idem: 'x'.repeat(129) }), 400, 'invalid-request', 'header.Idempotency-Key');
    expect(await snapshot(p.player.id)).toEqual(before);
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'noprog-unlock');
    expectError(await unlock(q.player.id, 'slash', {}, { token: h.serverKeys['noprog-live-key'] }), 403, 'service-disabled');
  });

  test("in a game of the service's own whose skill trees the game itself unlocks, a player's token is forbidden; its servers unlock", async () => {
    const houseKey = h.serverKeys['house-live-key'];
    const p = await signIn(h.base, houseKey, 'house-player');
    expectError(await unlock('me', 'house.root', {}, { token: p.accessToken }), 403, 'forbidden');
    expect(await unlockedNodes(p.player.id)).toEqual([]);
    expect(ok(await unlock(p.player.id, 'house.root', {}, { token: houseKey }))).toEqual({ nodeKey: 'house.root', alreadyUnlocked: false, charges: [] });
    // Elsewhere players unlock their own nodes.
    const q = await player('players-unlock');
    expect(ok(await unlock('me', 'free', {}, { token: q.accessToken })).alreadyUnlocked).toBe(false);
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

  test('an item type may require a skill node: use answers locked (details.missing) until the node is unlocked', async () => {
    const p = await player('blade-user');
    ok(
      await call(h.base, 'POST', `/players/${p.player.id}/items/grant`, {
        token: key,
        body: { itemTypeKey: 'blade', quantity: 2 },
        headers: { 'Idempotency-Key': newKey() },
      }),
    );
    const use = () => call(h.base, 'POST', '/players/me/item-stacks/use', { token: p.accessToken, body: { itemTypeKey: 'blade' } });
    expect(expectError(await use(), 409, 'locked').details).toEqual({ itemTypeKey: 'blade', missing: ['slash', 'chapter.1'] });
    await credit(p.player.id, 'gold', 10);
    ok(await unlock(p.player.id, 'slash'));
    expect(expectError(await use(), 409, 'locked').details).toEqual({ itemTypeKey: 'blade', missing: ['chapter.1'] });
    expect((await call(h.base, 'PUT', `/players/${p.player.id}/unlocks/chapter.1`, { token: key })).status).toBe(201);
    expect(ok(await use())).toEqual({ itemTypeKey: 'blade', item: null });
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

test('deleting the player takes their unlocked nodes; the same subject signing in again has none', async () => {
  const p = await player('node-leaver');
  await credit(p.player.id, 'gold', 10);
  ok(await unlock(p.player.id, 'slash'));
  expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
  expect(await unlockedNodes(p.player.id)).toEqual([]);
  const again = await player('node-leaver');
  expect(flags(ok(await call(h.base, 'GET', `/players/${again.player.id}/skill-trees/combat`, { token: key }))).slash).toBe('-/unlockable');
});

describe('a switched-off tree (SkillTree spec.enabled false)', () => {
  const switchMagic = async (enabled: boolean) =>
    reconcileManifest(h.db, validateManifest(JSON.parse(JSON.stringify(magic(enabled))) as AnyManifest, 'test'), h.core.bus);
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
