/**
 * The items' rules (spec §4 Game services "Items", "Buying", §2 item type definition, Purchase<T>, §3
 * consumed items; docs/economy.md "Buying"), called straight on core's services with no route in
 * between, each test in a transaction rolled back after it (test/support/domain.ts):
 * - grants (stacks, items with data, grantKey, maxOwned and the ceiling of exact numbers, the
 *   inventory chosen), consumptions, use, containers opened (fixed grants, weighted picks, where the
 *   contents go), each refusal with its details and that it changes nothing, and an item type's or a
 *   player's deletion;
 * - what the ItemType kind refuses: each refusal names its field, and none changes a row or moves the
 *   content version;
 * - buying: price rules, payWith, quantities, exact amounts past 2^32, consumed currencies and
 *   allowances, what a player may buy, where a purchase pays from and puts, and each refusal with its
 *   details, changing nothing.
 *
 * The HTTP side (status codes, error bodies, credentials and `me`, validation by the routes' schemas,
 * pages and cursors, Idempotency-Key replays) and the races, which need parallel connections, are in
 * test/items/items.test.ts and test/items/purchases.test.ts; the kind applied, changed and removed,
 * and GET /definitions/item-types, which reads each process's cache of committed rows, in
 * test/items/item-types.test.ts.
 */
import { type AnyManifest, removeManifest } from '@hearth/core/manifests';
import { ITEM_TYPES_CONTENT } from '@hearth/core/items';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { itemType, standardManifests } from '../support/manifests';
import { GAME_ENV, permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { chestDoc, heldItemTypes, heldType, shopItemTypes, swordDoc } from '../support/fixtures/items';
import { contentVersion, expectEachRefused } from '../support/reconcile';

const suite = domainSuite({
  manifests: [...standardManifests(), ...permanentAndSeason1Realms(), ...heldItemTypes(), ...shopCurrencies(), ...shopItemTypes()],
});
type Player = { id: string; env: EnvironmentContext };
const live = () => suite.player(GAME_ENV);
type GrantBody = Parameters<typeof suite.core.items.grant>[3];
type Ask = Parameters<typeof suite.core.purchases.buyItem>[3];

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
    await suite.apply([heldType('fleeting', { ownership: 'counted' }), heldType('fleeting-one', {})]);
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

describe('the ItemType kind', () => {
  const version = () => contentVersion(suite.db, ITEM_TYPES_CONTENT);

  /** Reconciles each document, expecting each refused on its field with its reason; then nothing has changed. */
  async function expectRefused(cases: [AnyManifest, string, RegExp][]) {
    const rowsBefore = await suite.db('item_types').orderBy('key').select('key', 'name', 'updated_at');
    const versionBefore = await version();
    await expectEachRefused(suite.db, suite.core.bus, cases);
    expect(await suite.db('item_types').orderBy('key').select('key', 'name', 'updated_at')).toEqual(rowsBefore);
    expect(await version()).toBe(versionBefore);
  }

  test('what the schema refuses names the field and changes nothing', async () => {
    await expectRefused([
      [swordDoc({ contents: { grants: [{ itemTypeKey: 'potion' }] } }), 'spec.contents', /only for an item type of category container/],
      [chestDoc({ contents: undefined }), 'spec.contents', /required for a container/],
      [chestDoc({ contents: {} }), 'spec.contents', /at least one grant or pick/],
      [chestDoc({ ownership: 'counted' }), 'spec.ownership', /one-by-one for a container/],
      [chestDoc({ usable: true }), 'spec.usable', /opened rather than used/],
      [swordDoc({ priceRule: 'any' }), 'spec.priceRule', /any needs at least one price/],
      [swordDoc({ purchasable: true }), 'spec.prices', /at least one price/],
      [
        swordDoc({
          prices: [
            { currencyKey: 'gold', amount: 1 },
            { currencyKey: 'gold', amount: 2 },
          ],
        }),
        'spec.prices',
        /each currency once/,
      ],
      [swordDoc({ requires: ['a', 'b', 'a'] }), 'spec.requires', /each unlock once/],
      [swordDoc({ prices: [{ currencyKey: 'gold', amount: 0 }] }), 'spec.prices.0.amount', /must be >= 1/],
      [swordDoc({ prices: [{ currencyKey: 'gold', amount: 1_000_000_001 }] }), 'spec.prices.0.amount', /must be <= 1000000000/],
      [swordDoc({ prices: Array.from({ length: 11 }, (_, i) => ({ currencyKey: `c${i}`, amount: 1 })) }), 'spec.prices', /must NOT have more than 10 items/],
      [swordDoc({ ownership: 'unique' }), 'spec.ownership', /one of "one-by-one", "counted"/],
      [swordDoc({ scope: 'guild' }), 'spec.scope', /one of "account", "realm"/],
      [swordDoc({ key: '-sword' }), 'spec.key', /must match pattern/],
      [swordDoc({ maxOwned: 0 }), 'spec.maxOwned', /must be >= 1/],
      [chestDoc({ contents: { picks: [{ count: 11, from: [{ itemTypeKey: 'sword' }] }] } }), 'spec.contents.picks.0.count', /must be <= 10/],
      [chestDoc({ contents: { picks: [{ count: 1, from: [] }] } }), 'spec.contents.picks.0.from', /must NOT have fewer than 1 items/],
      [chestDoc({ contents: { grants: [{ itemTypeKey: 'potion', quantity: 1001 }] } }), 'spec.contents.grants.0.quantity', /must be <= 1000/],
      [swordDoc({ colour: 'red' }), 'spec.colour', /is not taken here/],
    ]);
  });

  test('what the domain refuses beyond the schema (data over 1 KB, a key of another document, a name that is no key, an unknown environment) names the field and changes nothing', async () => {
    await expectRefused([
      [swordDoc({ data: { text: 'x'.repeat(1020) } }), 'spec.data', /1031 bytes written compactly; at most 1024/],
      [
        itemType('sword-2', { environment: 'alpha-live', key: 'sword', name: 'Another', category: 'weapon', ownership: 'counted' }),
        'spec.key',
        /already belongs to ItemType tests\/sword/,
      ],
      [itemType('a'.repeat(129), { environment: 'alpha-live', name: 'Long', category: 'weapon', ownership: 'counted' }), 'spec.key', /is not an item type key/],
      [itemType('nowhere', { environment: 'no-such-env', name: 'N', category: 'weapon', ownership: 'counted' }), 'spec.environment', /does not exist/],
    ]);
  });
});

describe('buying items', () => {
  const buy = (p: Player, request: Ask, by: 'server' | 'player' = 'server') => suite.core.purchases.buyItem(suite.db, p.env, p.id, request, by);
  const refused = (p: Player, request: Ask, by: 'server' | 'player' = 'server') => suite.refusal(() => buy(p, request, by));
  const credit = (p: Player, currencyKey: string, amount: number, extra: { realmId?: string } = {}) =>
    suite.core.economy.move(suite.db, p.env, p.id, currencyKey, 'credit', { amount, reason: 'setup', ...extra });
  const balances = async (p: Player, inventory = 'account') =>
    Object.fromEntries((await suite.core.economy.balances(suite.db, p.env, p.id, inventory, {})).items.map((b) => [b.currencyKey, b.amount]));
  const ledger = async (p: Player) => (await suite.core.economy.ledger(suite.db, p.env, p.id, { limit: 200 })).items;

  /** Everything a refusal must leave as it was: balances, stacks, items and the ledger. */
  async function snapshot(p: Player) {
    return {
      balances: await balances(p),
      stacks: (await suite.core.items.listStacks(suite.db, p.env, p.id, 'account', {})).items,
      items: (await suite.core.items.listItems(suite.db, p.env, p.id, 'account', {})).items,
      ledger: await ledger(p),
    };
  }

  describe('buying', () => {
    test('priceRule all pays every price times the quantity, in currency-key order, and grants the stack; the ledger names the purchase', async () => {
      const p = await live();
      await credit(p, 'gold', 100);
      await credit(p, 'gems', 10);
      const bought = await buy(p, { itemTypeKey: 'potion', quantity: 3 });
      const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
      expect(bought).toEqual({
        replayed: false,
        charges: [
          { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gems', amount: -6, balanceAfter: 4, replayed: false },
          { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gold', amount: -30, balanceAfter: 70, replayed: false },
        ],
        granted: { inventoryId: account.id, itemTypeKey: 'potion', stack: { itemTypeKey: 'potion', quantity: 3 }, items: [], alreadyGranted: false },
      });
      expect(await balances(p)).toEqual({ gems: 4, gold: 70 });
      expect(await stackOf(p, 'potion')).toBe(3);
      const entries = await ledger(p);
      for (const charge of bought.charges) {
        expect(entries.find((e) => e.id === charge.transactionId)).toMatchObject({
          currencyKey: charge.currencyKey,
          amount: charge.amount,
          balanceAfter: charge.balanceAfter,
          reason: 'purchase',
          reference: 'item:potion',
        });
      }
      // Default quantity 1; payWith naming one of the prices of an `all` item still pays them all.
      const one = await buy(p, { itemTypeKey: 'potion', payWith: 'gold' });
      expect(one.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
        ['gems', -2, 2],
        ['gold', -10, 60],
      ]);
      expect(one.granted?.stack).toEqual({ itemTypeKey: 'potion', quantity: 4 });
    });

    test('priceRule any pays the price payWith names; one-by-one items are made', async () => {
      const p = await live();
      await credit(p, 'gold', 1000);
      await credit(p, 'gems', 7);
      const withGems = await buy(p, { itemTypeKey: 'blade', payWith: 'gems' });
      const inventoryId = withGems.granted!.inventoryId;
      expect(withGems.charges).toEqual([{ transactionId: expect.any(String), inventoryId, currencyKey: 'gems', amount: -5, balanceAfter: 2, replayed: false }]);
      expect(withGems.granted!.stack).toBeNull();
      expect(withGems.granted!.items).toEqual([{ id: expect.any(String), inventoryId, itemTypeKey: 'blade', grantKey: null, consumedAt: null, data: {} }]);
      const withGold = await buy(p, { itemTypeKey: 'blade', payWith: 'gold' });
      expect(withGold.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['gold', -100, 900]]);
      expect(await balances(p)).toEqual({ gems: 2, gold: 900 });
      const held = (await suite.core.items.listItems(suite.db, p.env, p.id, 'account', {})).items;
      expect(held.map((i) => i.id)).toEqual([withGems.granted!.items[0].id, withGold.granted!.items[0].id]);
    });

    test('payWith: required for priceRule any, and must name one of the prices (invalid-request on payWith, nothing charged)', async () => {
      const p = await live();
      await credit(p, 'gold', 1000);
      await credit(p, 'gems', 100);
      const before = await snapshot(p);
      for (const ask of [{ itemTypeKey: 'blade' }, { itemTypeKey: 'blade', payWith: 'energy' }, { itemTypeKey: 'potion', payWith: 'tokens' }]) {
        expect(await refused(p, ask)).toMatchObject({ code: 'invalid-request', details: { field: 'payWith' } });
      }
      expect(await snapshot(p)).toEqual(before);
    });

    test('the quantity is 1 to 100; an inventory id with realmId is invalid on realmId; 20 potions fit maxOwned exactly', async () => {
      const p = await live();
      await credit(p, 'gold', 1000);
      await credit(p, 'gems', 1000);
      const before = await snapshot(p);
      for (const quantity of [0, 101, 1.5, -1]) {
        expect(await refused(p, { itemTypeKey: 'potion', quantity })).toMatchObject({ code: 'invalid-request', details: { field: 'quantity' } });
      }
      expect(await refused(p, { itemTypeKey: 'potion', inventoryId: 'nope', realmId: null })).toMatchObject({
        code: 'invalid-request',
        details: { field: 'realmId' },
      });
      expect(await snapshot(p)).toEqual(before);
      expect((await buy(p, { itemTypeKey: 'potion', quantity: 20 })).charges.map((c) => c.amount)).toEqual([-40, -200]);
    });

    test('amounts stay exact past 2^32: 100 × 1,000,000,000 is charged to the unit', async () => {
      const p = await live();
      for (let i = 0; i < 100; i++) await credit(p, 'gold', i === 99 ? 999_999_999 : 1_000_000_000);
      expect((await refused(p, { itemTypeKey: 'castle', quantity: 100 })).details).toEqual({
        currencyKey: 'gold',
        held: 99_999_999_999,
        requested: 100_000_000_000,
      });
      await credit(p, 'gold', 8);
      const big = await buy(p, { itemTypeKey: 'castle', quantity: 100 });
      expect(big.charges.map((c) => [c.amount, c.balanceAfter])).toEqual([[-100_000_000_000, 7]]);
      expect(big.granted?.stack).toEqual({ itemTypeKey: 'castle', quantity: 100 });
      expect(await refused(p, { itemTypeKey: 'castle', quantity: 100 })).toMatchObject({
        code: 'insufficient-balance',
        details: { currencyKey: 'gold', held: 7, requested: 100_000_000_000 },
      });
    });
  });

  describe('consumed currencies and allowances', () => {
    test('a server key sends the allowance; the spent figure rises within it; past it allowance-exceeded and nothing is granted', async () => {
      const p = await live();
      const first = await buy(p, { itemTypeKey: 'boost', quantity: 2, allowances: { energy: 100, gold: 5, unrelated: 1 } });
      expect(first.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['energy', 60, 60]]);
      expect(first.granted?.stack).toEqual({ itemTypeKey: 'boost', quantity: 2 });
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'boost', quantity: 2, allowances: { energy: 100 } })).toMatchObject({
        code: 'allowance-exceeded',
        details: { currencyKey: 'energy', held: 60, requested: 60, allowance: 100 },
      });
      expect(await snapshot(p)).toEqual(before);
      // Exactly up to the allowance is allowed.
      expect((await buy(p, { itemTypeKey: 'boost', allowances: { energy: 90 } })).charges[0].balanceAfter).toBe(90);
    });

    test('a consumed price without its allowance is invalid-request on allowances; a mixed price list charges both or neither', async () => {
      const p = await live();
      await credit(p, 'gold', 12);
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'mixed' })).toMatchObject({ code: 'invalid-request', details: { field: 'allowances', currencyKey: 'energy' } });
      expect(await refused(p, { itemTypeKey: 'mixed', allowances: { gold: 100 } })).toMatchObject({
        code: 'invalid-request',
        details: { field: 'allowances' },
      });
      expect(await snapshot(p)).toEqual(before);
      const bought = await buy(p, { itemTypeKey: 'mixed', quantity: 2, allowances: { energy: 1000 } });
      expect(bought.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
        ['energy', 20, 20],
        ['gold', -10, 2],
      ]);
      // energy (first in key order) would be charged, gold is short: neither is.
      const after = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'mixed', allowances: { energy: 1000 } })).toMatchObject({
        code: 'insufficient-balance',
        details: { currencyKey: 'gold', held: 2, requested: 5 },
      });
      expect(await snapshot(p)).toEqual(after);
    });

    test("a consumed currency's max caps what may be spent, whatever the allowance (balance-cap)", async () => {
      const p = await live();
      await buy(p, { itemTypeKey: 'boost', quantity: 16, allowances: { energy: 10_000 } });
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'boost', allowances: { energy: 10_000 } })).toMatchObject({
        code: 'balance-cap',
        details: { currencyKey: 'energy', held: 480, requested: 30 },
      });
      expect(await snapshot(p)).toEqual(before);
    });
  });

  describe('players', () => {
    test('a player buys with balance currencies; a consumed price, which needs an allowance only a server sends, is invalid-request on allowances', async () => {
      const p = await live();
      await credit(p, 'gold', 500);
      expect((await buy(p, { itemTypeKey: 'blade', payWith: 'gold' }, 'player')).charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
        ['gold', -100, 400],
      ]);
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'boost' }, 'player')).toMatchObject({ code: 'invalid-request', details: { field: 'allowances' } });
      expect(await snapshot(p)).toEqual(before);
    });
  });

  describe('refusals change nothing', () => {
    test('insufficient-balance names what is held and asked; no currency is charged', async () => {
      const p = await live();
      await credit(p, 'gold', 25);
      await credit(p, 'gems', 100);
      const before = await snapshot(p);
      // gems (first in key order) is affordable and would be charged first; gold is short.
      expect((await refused(p, { itemTypeKey: 'potion', quantity: 3 })).details).toEqual({ currencyKey: 'gold', held: 25, requested: 30 });
      expect((await refused(p, { itemTypeKey: 'blade', payWith: 'gold', quantity: 1, realmId: null })).details).toEqual({
        currencyKey: 'gold',
        held: 25,
        requested: 100,
      });
      expect(await snapshot(p)).toEqual(before);
    });

    test('a purchase past maxOwned is owned-limit and charges nothing', async () => {
      const p = await live();
      await credit(p, 'gold', 10_000);
      await credit(p, 'gems', 10_000);
      await buy(p, { itemTypeKey: 'blade', payWith: 'gold' });
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'blade', payWith: 'gold', quantity: 2 })).toMatchObject({
        code: 'owned-limit',
        details: { itemTypeKey: 'blade', held: 1, requested: 2, limit: 2 },
      });
      expect(await snapshot(p)).toEqual(before);
      await buy(p, { itemTypeKey: 'potion', quantity: 15 });
      const stacked = await snapshot(p);
      expect((await refused(p, { itemTypeKey: 'potion', quantity: 6 })).code).toBe('owned-limit');
      expect(await snapshot(p)).toEqual(stacked);
    });

    test('not-purchasable (a price in a currency the environment lacks too), disabled (the item or a price’s currency) and not-found', async () => {
      const p = await live();
      await credit(p, 'gold', 1000);
      const before = await snapshot(p);
      expect(await refused(p, { itemTypeKey: 'relic' })).toMatchObject({ code: 'not-purchasable', details: { itemTypeKey: 'relic' } });
      // Not for sale, never free (gold, also a price, is not charged).
      expect(await refused(p, { itemTypeKey: 'ghostpriced' })).toMatchObject({
        code: 'not-purchasable',
        details: { itemTypeKey: 'ghostpriced', currencyKey: 'ghost' },
      });
      expect(await refused(p, { itemTypeKey: 'offitem' })).toMatchObject({ code: 'disabled', details: { itemTypeKey: 'offitem' } });
      expect(await refused(p, { itemTypeKey: 'frozenpriced' })).toMatchObject({
        code: 'disabled',
        details: { itemTypeKey: 'frozenpriced', currencyKey: 'frozen' },
      });
      expect(await refused(p, { itemTypeKey: 'unknown' })).toMatchObject({ code: 'not-found', details: { field: 'itemTypeKey' } });
      expect(await refused({ ...p, id: 'nobody' }, { itemTypeKey: 'potion' })).toMatchObject({ code: 'not-found', details: { field: 'playerId' } });
      expect(await refused(p, { itemTypeKey: 'potion', inventoryId: 'no-such-inventory' })).toMatchObject({
        code: 'not-found',
        details: { field: 'inventoryId' },
      });
      expect(await refused(p, { itemTypeKey: 'potion', realmId: 'no-such-realm' })).toMatchObject({ code: 'not-found', details: { field: 'realmId' } });
      expect(await snapshot(p)).toEqual(before);
    });
  });

  describe('where a purchase pays from and puts', () => {
    test('a per-realm item goes to the current realm and is paid there; an account item paid in a realm currency pays from the current realm', async () => {
      const p = await live();
      await credit(p, 'tokens', 20);
      const banner = await buy(p, { itemTypeKey: 'banner', quantity: 2 });
      const season = await suite.core.economy.resolve(suite.db, p.env, p.id, 'current');
      expect(season.realmId).toBe('s1');
      expect(banner.granted).toMatchObject({ inventoryId: season.id, stack: { itemTypeKey: 'banner', quantity: 2 } });
      expect(banner.charges).toEqual([
        { transactionId: expect.any(String), inventoryId: season.id, currencyKey: 'tokens', amount: -6, balanceAfter: 14, replayed: false },
      ]);
      const cloak = await buy(p, { itemTypeKey: 'cloak' });
      const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
      expect(cloak.granted?.inventoryId).toBe(account.id);
      expect(cloak.charges.map((c) => [c.inventoryId, c.currencyKey, c.balanceAfter])).toEqual([[season.id, 'tokens', 10]]);
      // Named places: the realm by id, the inventory by id; a place the item's scope does not allow is invalid-request.
      expect((await buy(p, { itemTypeKey: 'banner', realmId: 's1' })).granted?.inventoryId).toBe(season.id);
      expect((await buy(p, { itemTypeKey: 'banner', inventoryId: season.id })).granted?.stack?.quantity).toBe(4);
      const before = await snapshot(p);
      expect((await refused(p, { itemTypeKey: 'banner', realmId: null })).details).toEqual({ field: 'realmId' });
      expect((await refused(p, { itemTypeKey: 'potion', inventoryId: season.id })).details).toEqual({ field: 'inventoryId' });
      expect(await snapshot(p)).toEqual(before);
      expect(await balances(p, 'current')).toEqual({ tokens: 4 });
    });

    test('an item bought in a realm that is not the current one is paid from that realm', async () => {
      const p = await live();
      await credit(p, 'tokens', 9, { realmId: 'permanent' });
      const bought = await buy(p, { itemTypeKey: 'banner', realmId: 'permanent' });
      const permanent = (await suite.core.economy.listInventories(suite.db, p.env, p.id, {})).items.find((i) => i.realmId === 'permanent')!;
      expect(bought.granted?.inventoryId).toBe(permanent.id);
      expect(bought.charges.map((c) => [c.inventoryId, c.balanceAfter])).toEqual([[permanent.id, 6]]);
    });
  });
});
