/**
 * The items' rules (spec §4 Game services "Items", §3 consumed items), called straight on core's
 * services with no route in between: grants (stacks, items with data, grantKey, maxOwned and the
 * ceiling of exact numbers, the inventory chosen), consumptions, use, containers opened (fixed
 * grants, weighted picks, where the contents go), each refusal with its details and that it changes
 * nothing, and an item type's or a player's deletion. Each test runs in a transaction rolled back after
 * it (test/support/domain.ts).
 *
 * The HTTP side (status codes, error bodies, credentials and `me`, validation by the routes' schemas,
 * pages and cursors, Idempotency-Key replays) and the races, which need parallel connections, are in
 * test/items/items.test.ts.
 */
import { removeManifest } from '@hearth/core/manifests';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { itemType, realm, standardManifests } from '../support/manifests';

const envName = 'alpha-live';
const type = (name: string, spec: Record<string, unknown>) =>
  itemType(name, { environment: envName, name, category: 'misc', ownership: 'one-by-one', ...spec });
const container = (name: string, contents: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  type(name, { category: 'container', contents: { grants: [], picks: [], ...contents }, ...spec });

const content = [
  realm('permanent', { environment: envName, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: envName, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  type('sword', { usable: true, maxOwned: 3, requires: ['chapter.1'] }),
  type('gem', { ownership: 'counted', usable: true, maxOwned: 50 }),
  type('shard', { ownership: 'counted' }),
  type('relic', {}),
  type('badge', { scope: 'realm' }),
  type('off', { usable: true, enabled: false }),
  type('offstack', { ownership: 'counted', usable: true, enabled: false }),
  container('chest', {
    grants: [{ itemTypeKey: 'gem', quantity: 2 }],
    picks: [
      {
        count: 2,
        from: [
          { itemTypeKey: 'relic', weight: 1 },
          { itemTypeKey: 'shard', quantity: 5, weight: 1 },
        ],
      },
    ],
  }),
  container('badchest', { grants: [{ itemTypeKey: 'gem', quantity: 1 }], picks: [{ count: 1, from: [{ itemTypeKey: 'ghost', weight: 1 }] }] }),
  container('offchest', { grants: [{ itemTypeKey: 'off', quantity: 1 }] }),
  container('lockedchest', { grants: [{ itemTypeKey: 'gem', quantity: 1 }] }, { requires: ['vault', 'chapter.1'] }),
  container('limitchest', {
    grants: [
      { itemTypeKey: 'gem', quantity: 1 },
      { itemTypeKey: 'sword', quantity: 4 },
    ],
  }),
  container(
    'realmchest',
    {
      grants: [
        { itemTypeKey: 'gem', quantity: 1 },
        { itemTypeKey: 'badge', quantity: 1 },
      ],
    },
    { scope: 'realm' },
  ),
  container('dice', {
    picks: [
      {
        count: 2,
        from: [
          { itemTypeKey: 'relic', weight: 1 },
          { itemTypeKey: 'shard', quantity: 5, weight: 3 },
        ],
      },
    ],
  }),
  container('offbox', { grants: [{ itemTypeKey: 'gem', quantity: 1 }] }, { enabled: false }),
  type('lonely', { environment: 'alpha-test', scope: 'realm' }),
];

const suite = domainSuite({ manifests: [...standardManifests(), ...content] });
type Player = { id: string; env: EnvironmentContext };
const live = () => suite.player(envName);
type GrantBody = Parameters<typeof suite.core.items.grant>[3];

const grant = async (p: Player, request: GrantBody) => (await suite.core.items.grant(suite.db, p.env, p.id, request)).answer;
const refusedGrant = (p: Player, request: GrantBody) => suite.refusal(() => suite.core.items.grant(suite.db, p.env, p.id, request));
const consume = async (p: Player, itemId: string) => (await suite.core.items.consumeItem(suite.db, p.env, p.id, itemId)).answer;
const consumeStack = async (p: Player, itemTypeKey: string, quantity?: number) =>
  (await suite.core.items.consumeStack(suite.db, p.env, p.id, { itemTypeKey, quantity })).answer;
const useItem = async (p: Player, itemId: string) => (await suite.core.items.useItem(suite.db, p.env, p.id, itemId)).answer;
const useStack = async (p: Player, itemTypeKey: string) => (await suite.core.items.useStack(suite.db, p.env, p.id, { itemTypeKey })).answer;
const open = async (p: Player, itemId: string) => (await suite.core.items.openContainer(suite.db, p.env, p.id, itemId)).answer;
const items = (p: Player, inventory = 'account', q = {}) => suite.core.items.listItems(suite.db, p.env, p.id, inventory, q);
const stacks = (p: Player, inventory = 'account') => suite.core.items.listStacks(suite.db, p.env, p.id, inventory, {});
const stackOf = async (p: Player, itemTypeKey: string, inventory = 'account') =>
  (await stacks(p, inventory)).items.find((s) => s.itemTypeKey === itemTypeKey)?.quantity ?? 0;
const unlock = (p: Player, key: string) => suite.core.unlocks.record(suite.db, p.env, p.id, key);
const setType = (key: string, change: Record<string, unknown>) => suite.db('item_types').where({ key }).update(change);

describe('grants', () => {
  test('a counted type grows its stack (quantity default 1); the stacks are listed by key with the inventory', async () => {
    const p = await live();
    const first = await grant(p, { itemTypeKey: 'gem', quantity: 5 });
    expect(first).toEqual({
      inventoryId: expect.any(String),
      itemTypeKey: 'gem',
      stack: { itemTypeKey: 'gem', quantity: 5 },
      items: [],
      alreadyGranted: false,
    });
    expect((await grant(p, { itemTypeKey: 'gem' })).stack).toEqual({ itemTypeKey: 'gem', quantity: 6 });
    await grant(p, { itemTypeKey: 'shard', quantity: 1000 });
    expect(await stacks(p)).toEqual({
      items: [
        { itemTypeKey: 'gem', quantity: 6 },
        { itemTypeKey: 'shard', quantity: 1000 },
      ],
      next: null,
      inventory: { id: first.inventoryId, realmId: null },
    });
  });

  test('a one-by-one type makes `quantity` items with their data, listed in the order granted, in pages', async () => {
    const p = await live();
    const made = await grant(p, { itemTypeKey: 'relic', quantity: 3, data: { level: 2, tags: ['a'] } });
    expect(made.stack).toBeNull();
    expect(made.alreadyGranted).toBe(false);
    expect(made.items).toHaveLength(3);
    for (const item of made.items) {
      expect(item).toEqual({
        id: expect.any(String),
        inventoryId: made.inventoryId,
        itemTypeKey: 'relic',
        grantKey: null,
        consumedAt: null,
        data: { level: 2, tags: ['a'] },
      });
    }
    const plain = (await grant(p, { itemTypeKey: 'relic' })).items[0];
    expect(plain.data).toEqual({});
    const all = await items(p);
    expect(all.items.map((i) => i.id)).toEqual([...made.items.map((i) => i.id), plain.id]);
    expect(all.inventory).toEqual({ id: made.inventoryId, realmId: null });
    const first = await items(p, 'account', { limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(await items(p, made.inventoryId, { limit: 3, cursor: first.next! })).toEqual({
      items: [plain],
      next: null,
      inventory: { id: made.inventoryId, realmId: null },
    });
    // A cursor is bound to its inventory.
    await suite.expectRefusal(() => items(p, 'current', { cursor: first.next! }), 'invalid-request', 'cursor');
  });

  test('a grantKey grants once: granting again answers the first grant with alreadyGranted: true, even after it was consumed; the key is per item type', async () => {
    const p = await live();
    const first = await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1', data: { v: 1 } });
    expect(first.items[0]).toMatchObject({ grantKey: 'quest.1', data: { v: 1 } });
    expect(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1', data: { v: 2 }, realmId: null })).toEqual({ ...first, alreadyGranted: true });
    await consume(p, first.items[0].id);
    const later = await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1' });
    expect(later.alreadyGranted).toBe(true);
    expect(later.items[0]).toMatchObject({ id: first.items[0].id, consumedAt: expect.any(String) });
    expect((await grant(p, { itemTypeKey: 'sword', grantKey: 'quest.1' })).alreadyGranted).toBe(false);
    expect(await suite.db('items').where({ player_id: p.id, grant_key: 'quest.1' }).count({ n: '*' })).toEqual([{ n: '2' }]);
  });

  test('refusals: grantKey or data on a counted type, grantKey with quantity > 1, data over 1 KB, quantity out of range, unknown type or player, switched off; none grants', async () => {
    const p = await live();
    expect(await refusedGrant(p, { itemTypeKey: 'gem', grantKey: 'k' })).toMatchObject({ code: 'invalid-request', details: { field: 'grantKey' } });
    expect(await refusedGrant(p, { itemTypeKey: 'gem', data: { a: 1 } })).toMatchObject({ code: 'invalid-request', details: { field: 'data' } });
    expect(await refusedGrant(p, { itemTypeKey: 'relic', grantKey: 'k', quantity: 2 })).toMatchObject({
      code: 'invalid-request',
      details: { field: 'quantity' },
    });
    const big = { text: 'x'.repeat(1024 - '{"text":""}'.length) };
    await grant(p, { itemTypeKey: 'relic', data: big });
    expect(await refusedGrant(p, { itemTypeKey: 'relic', data: { ...big, text: big.text + 'é' } })).toMatchObject({
      code: 'invalid-request',
      details: { field: 'data' },
    });
    for (const quantity of [0, 1001]) {
      expect(await refusedGrant(p, { itemTypeKey: 'relic', quantity })).toMatchObject({ code: 'invalid-request', details: { field: 'quantity' } });
    }
    expect(await refusedGrant(p, { itemTypeKey: 'ghost' })).toMatchObject({ code: 'not-found', details: { field: 'itemTypeKey' } });
    expect(await refusedGrant({ ...p, id: 'nobody' }, { itemTypeKey: 'relic' })).toMatchObject({ code: 'not-found', details: { field: 'playerId' } });
    expect(await refusedGrant(p, { itemTypeKey: 'off' })).toMatchObject({ code: 'disabled', details: { itemTypeKey: 'off' } });
    expect((await items(p)).items).toHaveLength(1);
    expect((await stacks(p)).items).toEqual([]);
  });

  test('maxOwned counts the items not consumed and a stack’s quantity; owned-limit carries held, requested and limit; a stack made by the refused grant is not kept', async () => {
    const p = await live();
    const two = await grant(p, { itemTypeKey: 'sword', quantity: 2 });
    expect(await refusedGrant(p, { itemTypeKey: 'sword', quantity: 2 })).toMatchObject({
      code: 'owned-limit',
      details: { itemTypeKey: 'sword', held: 2, requested: 2, limit: 3 },
    });
    await consume(p, two.items[0].id);
    await grant(p, { itemTypeKey: 'sword', quantity: 2 });
    expect((await items(p)).items.filter((i) => i.itemTypeKey === 'sword')).toHaveLength(3);
    await grant(p, { itemTypeKey: 'gem', quantity: 50 });
    expect((await refusedGrant(p, { itemTypeKey: 'gem' })).details).toEqual({ itemTypeKey: 'gem', held: 50, requested: 1, limit: 50 });
    expect(await stackOf(p, 'gem')).toBe(50);
    const fresh = await live();
    expect((await refusedGrant(fresh, { itemTypeKey: 'gem', quantity: 51 })).details).toEqual({ itemTypeKey: 'gem', held: 0, requested: 51, limit: 50 });
    expect((await stacks(fresh)).items).toEqual([]);
    expect(await suite.db('item_stacks').whereIn('inventory_id', suite.db('inventories').where({ player_id: fresh.id }).select('id'))).toEqual([]);
  });

  test('a stack with no maxOwned stops at 2^53-1: owned-limit past it, nothing changed', async () => {
    const p = await live();
    const account = (await grant(p, { itemTypeKey: 'shard' })).inventoryId;
    // Near the ceiling of exact numbers (put there directly: a test cannot grant 2^53 times).
    await suite
      .db('item_stacks')
      .where({ inventory_id: account, item_type_key: 'shard' })
      .update({ quantity: (2n ** 53n - 2n).toString() });
    expect((await refusedGrant(p, { itemTypeKey: 'shard', quantity: 2 })).details).toEqual({
      itemTypeKey: 'shard',
      held: 2 ** 53 - 2,
      requested: 2,
      limit: Number.MAX_SAFE_INTEGER,
    });
    expect(await stackOf(p, 'shard')).toBe(2 ** 53 - 2);
    expect((await grant(p, { itemTypeKey: 'shard' })).stack).toEqual({ itemTypeKey: 'shard', quantity: Number.MAX_SAFE_INTEGER });
  });

  test('choosing an inventory: the type’s scope decides; realmId / inventoryId must fit it; no-current-realm without an open realm', async () => {
    const p = await live();
    const badge = await grant(p, { itemTypeKey: 'badge' });
    const current = await suite.core.economy.resolve(suite.db, p.env, p.id, 'current');
    expect(badge.inventoryId).toBe(current.id);
    expect((await grant(p, { itemTypeKey: 'badge', realmId: 'permanent' })).inventoryId).not.toBe(current.id);
    expect((await refusedGrant(p, { itemTypeKey: 'badge', realmId: null })).details).toEqual({ field: 'realmId' });
    expect((await refusedGrant(p, { itemTypeKey: 'relic', realmId: 's1' })).details).toEqual({ field: 'realmId' });
    expect((await refusedGrant(p, { itemTypeKey: 'relic', inventoryId: current.id })).details).toEqual({ field: 'inventoryId' });
    expect((await refusedGrant(p, { itemTypeKey: 'relic', inventoryId: current.id, realmId: null })).details).toEqual({ field: 'realmId' });
    expect(await refusedGrant(p, { itemTypeKey: 'badge', realmId: 'nowhere' })).toMatchObject({ code: 'not-found', details: { field: 'realmId' } });
    const other = await live();
    const theirs = await grant(other, { itemTypeKey: 'relic' });
    expect(await refusedGrant(p, { itemTypeKey: 'relic', inventoryId: theirs.inventoryId })).toMatchObject({
      code: 'not-found',
      details: { field: 'inventoryId' },
    });
    const account = await grant(p, { itemTypeKey: 'relic', realmId: null });
    expect((await grant(p, { itemTypeKey: 'relic', inventoryId: account.inventoryId })).inventoryId).toBe(account.inventoryId);
    // alpha-test has no realm open.
    const q = await suite.player('alpha-test');
    expect((await refusedGrant(q, { itemTypeKey: 'lonely' })).code).toBe('no-current-realm');
    await suite.expectRefusal(() => items(q, 'current'), 'no-current-realm');
    await suite.expectRefusal(() => stacks(q, 'nope'), 'not-found');
  });
});

describe('consumptions', () => {
  test('an item is consumed once (already-consumed after), leaves the items list, and is the player’s own', async () => {
    const p = await live();
    const [item] = (await grant(p, { itemTypeKey: 'relic' })).items;
    const done = await consume(p, item.id);
    expect(done).toEqual({ item: { ...item, consumedAt: expect.any(String) } });
    expect(Date.parse(done.item.consumedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect(await suite.refusal(() => consume(p, item.id))).toMatchObject({ code: 'already-consumed', details: { itemTypeKey: 'relic' } });
    expect((await items(p)).items).toEqual([]);
    const other = await live();
    const [theirs] = (await grant(other, { itemTypeKey: 'relic' })).items;
    await suite.expectRefusal(() => consume(p, theirs.id), 'not-found');
    await suite.expectRefusal(() => consume(p, 'nothing'), 'not-found');
    expect((await items(other)).items).toEqual([theirs]);
  });

  test('a stack gives what it holds and no more (insufficient-balance with held and requested); an empty stack is not listed; a one-by-one type has no stack', async () => {
    const p = await live();
    await grant(p, { itemTypeKey: 'gem', quantity: 8 });
    expect(await consumeStack(p, 'gem', 3)).toEqual({ stack: { itemTypeKey: 'gem', quantity: 5 } });
    expect(await consumeStack(p, 'gem')).toEqual({ stack: { itemTypeKey: 'gem', quantity: 4 } });
    expect((await suite.refusal(() => consumeStack(p, 'gem', 5))).details).toEqual({ itemTypeKey: 'gem', held: 4, requested: 5 });
    expect(await suite.refusal(() => consumeStack(p, 'shard'))).toMatchObject({
      code: 'insufficient-balance',
      details: { itemTypeKey: 'shard', held: 0, requested: 1 },
    });
    expect(await stackOf(p, 'gem')).toBe(4);
    expect(await consumeStack(p, 'gem', 4)).toEqual({ stack: { itemTypeKey: 'gem', quantity: 0 } });
    expect((await stacks(p)).items).toEqual([]);
    await suite.expectRefusal(() => consumeStack(p, 'relic'), 'invalid-request', 'itemTypeKey');
    await suite.expectRefusal(() => consumeStack(p, 'ghost'), 'not-found');
    await suite.expectRefusal(() => consumeStack(p, 'gem', 1001), 'invalid-request', 'quantity');
  });
});

describe('use', () => {
  test('an item of a usable type is used once, with its unlocks (locked lists the missing ones); not-usable, disabled and unknown items are refused and consume nothing', async () => {
    const p = await live();
    const [sword] = (await grant(p, { itemTypeKey: 'sword' })).items;
    expect(await suite.refusal(() => useItem(p, sword.id))).toMatchObject({ code: 'locked', details: { itemTypeKey: 'sword', missing: ['chapter.1'] } });
    await unlock(p, 'chapter.1');
    expect(await useItem(p, sword.id)).toEqual({ itemTypeKey: 'sword', item: { ...sword, consumedAt: expect.any(String) } });
    await suite.expectRefusal(() => useItem(p, sword.id), 'already-consumed');

    const [relic] = (await grant(p, { itemTypeKey: 'relic' })).items;
    expect(await suite.refusal(() => useItem(p, relic.id))).toMatchObject({ code: 'not-usable', details: { itemTypeKey: 'relic' } });
    // A switched-off type: granted before it was switched off, then not used.
    const [off] = (await grant(p, { itemTypeKey: 'sword' })).items;
    await setType('sword', { enabled: false });
    await suite.expectRefusal(() => useItem(p, off.id), 'disabled');
    await suite.expectRefusal(() => useItem(p, 'nothing'), 'not-found');
    expect((await items(p)).items.map((i) => i.id)).toEqual([relic.id, off.id]);
    await setType('sword', { enabled: true });
    expect((await useItem(p, off.id)).item?.consumedAt).toEqual(expect.any(String));
  });

  test('a stack is used one at a time: insufficient-balance when empty, not-usable, disabled, locked, one-by-one types refused; none takes from the stack', async () => {
    const p = await live();
    await grant(p, { itemTypeKey: 'gem', quantity: 2 });
    expect(await useStack(p, 'gem')).toEqual({ itemTypeKey: 'gem', item: null });
    expect(await stackOf(p, 'gem')).toBe(1);
    await useStack(p, 'gem');
    expect(await suite.refusal(() => useStack(p, 'gem'))).toMatchObject({
      code: 'insufficient-balance',
      details: { itemTypeKey: 'gem', held: 0, requested: 1 },
    });
    await grant(p, { itemTypeKey: 'shard', quantity: 1 });
    await suite.expectRefusal(() => useStack(p, 'shard'), 'not-usable');
    await suite.expectRefusal(() => useStack(p, 'offstack'), 'disabled');
    await suite.expectRefusal(() => useStack(p, 'sword'), 'invalid-request', 'itemTypeKey');
    await suite.expectRefusal(() => useStack(p, 'ghost'), 'not-found');
    await setType('gem', { requires: JSON.stringify(['gem.license']) });
    await grant(p, { itemTypeKey: 'gem' });
    expect(await suite.refusal(() => useStack(p, 'gem'))).toMatchObject({ code: 'locked', details: { itemTypeKey: 'gem', missing: ['gem.license'] } });
    expect(await stackOf(p, 'gem')).toBe(1);
    expect(await stackOf(p, 'shard')).toBe(1);
  });
});

describe('open', () => {
  test('a container opens once and gives its fixed grants and its weighted picks, in the same transaction', async () => {
    const p = await live();
    const [chest] = (await grant(p, { itemTypeKey: 'chest' })).items;
    const opened = await open(p, chest.id);
    expect(opened.itemTypeKey).toBe('chest');
    expect(opened.item).toEqual({ ...chest, consumedAt: expect.any(String) });
    const byType = Object.fromEntries(opened.granted.map((g) => [g.itemTypeKey, g]));
    expect(opened.granted.map((g) => g.itemTypeKey)).toEqual(Object.keys(byType).sort());
    expect(byType.gem).toEqual({ inventoryId: chest.inventoryId, itemTypeKey: 'gem', stack: { itemTypeKey: 'gem', quantity: 2 }, items: [] });
    const relics = byType.relic?.items.length ?? 0;
    const shards = byType.shard?.stack?.quantity ?? 0;
    expect(relics + shards / 5).toBe(2);
    expect(await stackOf(p, 'gem')).toBe(2);
    expect(await stackOf(p, 'shard')).toBe(shards);
    expect((await items(p)).items.map((i) => i.itemTypeKey)).toEqual(Array(relics).fill('relic'));
    await suite.expectRefusal(() => open(p, chest.id), 'already-consumed');
    await suite.expectRefusal(() => open(p, 'nothing'), 'not-found');
    expect(await stackOf(p, 'gem')).toBe(2);
  });

  test('the picks follow their weights', async () => {
    // 60 boxes, 120 draws at 1:3: relics come up 30 times on average (sd 4.7); outside 10-50 only if the draw ignores the weights.
    const p = await live();
    const boxes = (await grant(p, { itemTypeKey: 'dice', quantity: 60 })).items;
    let relics = 0;
    for (const box of boxes) relics += (await open(p, box.id)).granted.find((g) => g.itemTypeKey === 'relic')?.items.length ?? 0;
    expect(relics).toBeGreaterThan(10);
    expect(relics).toBeLessThan(50);
    expect(await stackOf(p, 'shard')).toBe((120 - relics) * 5);
  });

  test('refusals consume nothing: not a container, contents naming a missing or switched-off type, locked, owned-limit', async () => {
    const p = await live();
    const one = async (itemTypeKey: string) => (await grant(p, { itemTypeKey })).items[0];
    const relic = await one('relic');
    expect(await suite.refusal(() => open(p, relic.id))).toMatchObject({ code: 'not-usable', details: { itemTypeKey: 'relic' } });
    const bad = await one('badchest');
    expect(await suite.refusal(() => open(p, bad.id))).toMatchObject({ code: 'not-usable', details: { itemTypeKey: 'ghost' } });
    const off = await one('offchest');
    expect(await suite.refusal(() => open(p, off.id))).toMatchObject({ code: 'not-usable', details: { itemTypeKey: 'off' } });
    const locked = await one('lockedchest');
    expect(await suite.refusal(() => open(p, locked.id))).toMatchObject({
      code: 'locked',
      details: { itemTypeKey: 'lockedchest', missing: ['vault', 'chapter.1'] },
    });
    await unlock(p, 'chapter.1');
    expect((await suite.refusal(() => open(p, locked.id))).details?.missing).toEqual(['vault']);
    const limit = await one('limitchest');
    expect(await suite.refusal(() => open(p, limit.id))).toMatchObject({ code: 'owned-limit', details: { itemTypeKey: 'sword', held: 0, requested: 4 } });
    // Nothing granted, nothing consumed: every container is still held, and the limit chest's gem never came.
    expect((await items(p)).items.map((i) => i.id)).toEqual([relic.id, bad.id, off.id, locked.id, limit.id]);
    expect((await stacks(p)).items).toEqual([]);
    await unlock(p, 'vault');
    expect((await open(p, locked.id)).itemTypeKey).toBe('lockedchest');
  });

  test('a switched-off container is not opened (disabled) and stays held', async () => {
    const p = await live();
    await setType('offbox', { enabled: true });
    const [box] = (await grant(p, { itemTypeKey: 'offbox' })).items;
    await setType('offbox', { enabled: false });
    expect(await suite.refusal(() => open(p, box.id))).toMatchObject({ code: 'disabled', details: { itemTypeKey: 'offbox' } });
    expect((await items(p)).items).toEqual([box]);
  });

  test('contents go into the container’s inventory when their scope allows it, else where their scope puts them', async () => {
    const p = await live();
    const [chest] = (await grant(p, { itemTypeKey: 'realmchest', realmId: 'permanent' })).items;
    const opened = await open(p, chest.id);
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    expect(opened.granted.map((g) => [g.itemTypeKey, g.inventoryId])).toEqual([
      ['badge', chest.inventoryId],
      ['gem', account.id],
    ]);
    expect((await items(p, chest.inventoryId)).items.map((i) => i.itemTypeKey)).toEqual(['badge']);
  });
});

describe('definitions and players', () => {
  test('deleting an item type leaves the items held; deleting the player removes them', async () => {
    await suite.apply([type('fleeting', { ownership: 'counted' }), type('fleeting-one', {})]);
    const p = await live();
    await grant(p, { itemTypeKey: 'fleeting', quantity: 4 });
    const [one] = (await grant(p, { itemTypeKey: 'fleeting-one' })).items;
    await removeManifest(suite.db, { kind: 'ItemType', namespace: 'tests', name: 'fleeting' }, suite.core.bus);
    await removeManifest(suite.db, { kind: 'ItemType', namespace: 'tests', name: 'fleeting-one' }, suite.core.bus);
    expect(await stackOf(p, 'fleeting')).toBe(4);
    expect((await items(p)).items).toEqual([one]);
    // An item of a deleted type is not used, but the server may still take it.
    await suite.expectRefusal(() => useItem(p, one.id), 'not-usable');
    await consume(p, one.id);
    await suite.core.deletePlayer(suite.db, p.env, p.id);
    const left = await suite.db.raw(
      `SELECT (SELECT count(*) FROM items WHERE player_id = ?)::int AS items,
              (SELECT count(*) FROM item_stacks s JOIN inventories i ON i.id = s.inventory_id WHERE i.player_id = ?)::int AS stacks`,
      [p.id, p.id],
    );
    expect(left.rows[0]).toEqual({ items: 0, stacks: 0 });
  });
});
