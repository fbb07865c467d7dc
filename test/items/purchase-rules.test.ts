/**
 * The rules of buying items (spec §4 Game services "Buying", §2 Purchase<T>; docs/economy.md
 * "Buying"), called straight on core's purchases service with no route in between: price rules,
 * payWith, quantities, exact amounts past 2^32, consumed currencies and allowances, what a player may
 * buy, where a purchase pays from and puts, and each refusal with its details, changing nothing. Each
 * test runs in a transaction rolled back after it (test/support/domain.ts).
 *
 * The HTTP side (status codes and error bodies, the body's schema, credentials and `me`, Idempotency-Key
 * replays, parallel purchases) is in test/items/purchases.test.ts.
 */
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { currency, itemType, realm, standardManifests } from '../support/manifests';

const env = 'alpha-live';
const type = (name: string, spec: Record<string, unknown>) =>
  itemType(name, { environment: env, name, category: 'misc', ownership: 'counted', purchasable: true, ...spec });
const coin = (name: string, spec: Record<string, unknown>) => currency(name, { environment: env, name, scope: 'account', kind: 'balance', ...spec });

const content = [
  realm('permanent', { environment: env, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  coin('gold', {}),
  coin('gems', {}),
  coin('energy', { kind: 'consumed', max: 500 }),
  coin('tokens', { scope: 'realm' }),
  coin('frozen', { enabled: false }),
  type('potion', {
    maxOwned: 20,
    prices: [
      { currencyKey: 'gold', amount: 10 },
      { currencyKey: 'gems', amount: 2 },
    ],
  }),
  type('sword', {
    ownership: 'one-by-one',
    maxOwned: 2,
    priceRule: 'any',
    prices: [
      { currencyKey: 'gold', amount: 100 },
      { currencyKey: 'gems', amount: 5 },
    ],
  }),
  type('boost', { prices: [{ currencyKey: 'energy', amount: 30 }] }),
  type('mixed', {
    prices: [
      { currencyKey: 'gold', amount: 5 },
      { currencyKey: 'energy', amount: 10 },
    ],
  }),
  type('relic', { purchasable: false }),
  type('offitem', { enabled: false, prices: [{ currencyKey: 'gold', amount: 1 }] }),
  type('ghostpriced', {
    prices: [
      { currencyKey: 'gold', amount: 1 },
      { currencyKey: 'ghost', amount: 1 },
    ],
  }),
  type('frozenpriced', { prices: [{ currencyKey: 'frozen', amount: 1 }] }),
  type('badge', { scope: 'realm', prices: [{ currencyKey: 'tokens', amount: 3 }] }),
  type('cloak', { prices: [{ currencyKey: 'tokens', amount: 4 }] }),
  type('castle', { prices: [{ currencyKey: 'gold', amount: 1_000_000_000 }] }),
];

const suite = domainSuite({ manifests: [...standardManifests(), ...content] });
type Player = { id: string; env: EnvironmentContext };
type Ask = Parameters<typeof suite.core.purchases.buyItem>[3];
const live = () => suite.player(env);

const buy = (p: Player, request: Ask, by: 'server' | 'player' = 'server') => suite.core.purchases.buyItem(suite.db, p.env, p.id, request, by);
const refused = (p: Player, request: Ask, by: 'server' | 'player' = 'server') => suite.refusal(() => buy(p, request, by));
const credit = (p: Player, currencyKey: string, amount: number, extra: { realmId?: string } = {}) =>
  suite.core.economy.move(suite.db, p.env, p.id, currencyKey, 'credit', { amount, reason: 'setup', ...extra });
const balances = async (p: Player, inventory = 'account') =>
  Object.fromEntries((await suite.core.economy.balances(suite.db, p.env, p.id, inventory, {})).items.map((b) => [b.currencyKey, b.amount]));
const stackOf = async (p: Player, itemTypeKey: string, inventory = 'account') =>
  (await suite.core.items.listStacks(suite.db, p.env, p.id, inventory, {})).items.find((s) => s.itemTypeKey === itemTypeKey)?.quantity ?? 0;
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
    const withGems = await buy(p, { itemTypeKey: 'sword', payWith: 'gems' });
    const inventoryId = withGems.granted!.inventoryId;
    expect(withGems.charges).toEqual([{ transactionId: expect.any(String), inventoryId, currencyKey: 'gems', amount: -5, balanceAfter: 2, replayed: false }]);
    expect(withGems.granted!.stack).toBeNull();
    expect(withGems.granted!.items).toEqual([{ id: expect.any(String), inventoryId, itemTypeKey: 'sword', grantKey: null, consumedAt: null, data: {} }]);
    const withGold = await buy(p, { itemTypeKey: 'sword', payWith: 'gold' });
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
    for (const ask of [{ itemTypeKey: 'sword' }, { itemTypeKey: 'sword', payWith: 'energy' }, { itemTypeKey: 'potion', payWith: 'tokens' }]) {
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
    expect(await refused(p, { itemTypeKey: 'mixed', allowances: { gold: 100 } })).toMatchObject({ code: 'invalid-request', details: { field: 'allowances' } });
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
    expect((await buy(p, { itemTypeKey: 'sword', payWith: 'gold' }, 'player')).charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
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
    expect((await refused(p, { itemTypeKey: 'sword', payWith: 'gold', quantity: 1, realmId: null })).details).toEqual({
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
    await buy(p, { itemTypeKey: 'sword', payWith: 'gold' });
    const before = await snapshot(p);
    expect(await refused(p, { itemTypeKey: 'sword', payWith: 'gold', quantity: 2 })).toMatchObject({
      code: 'owned-limit',
      details: { itemTypeKey: 'sword', held: 1, requested: 2, limit: 2 },
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
    const badge = await buy(p, { itemTypeKey: 'badge', quantity: 2 });
    const season = await suite.core.economy.resolve(suite.db, p.env, p.id, 'current');
    expect(season.realmId).toBe('s1');
    expect(badge.granted).toMatchObject({ inventoryId: season.id, stack: { itemTypeKey: 'badge', quantity: 2 } });
    expect(badge.charges).toEqual([
      { transactionId: expect.any(String), inventoryId: season.id, currencyKey: 'tokens', amount: -6, balanceAfter: 14, replayed: false },
    ]);
    const cloak = await buy(p, { itemTypeKey: 'cloak' });
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    expect(cloak.granted?.inventoryId).toBe(account.id);
    expect(cloak.charges.map((c) => [c.inventoryId, c.currencyKey, c.balanceAfter])).toEqual([[season.id, 'tokens', 10]]);
    // Named places: the realm by id, the inventory by id; a place the item's scope does not allow is invalid-request.
    expect((await buy(p, { itemTypeKey: 'badge', realmId: 's1' })).granted?.inventoryId).toBe(season.id);
    expect((await buy(p, { itemTypeKey: 'badge', inventoryId: season.id })).granted?.stack?.quantity).toBe(4);
    const before = await snapshot(p);
    expect((await refused(p, { itemTypeKey: 'badge', realmId: null })).details).toEqual({ field: 'realmId' });
    expect((await refused(p, { itemTypeKey: 'potion', inventoryId: season.id })).details).toEqual({ field: 'inventoryId' });
    expect(await snapshot(p)).toEqual(before);
    expect(await balances(p, 'current')).toEqual({ tokens: 4 });
  });

  test('an item bought in a realm that is not the current one is paid from that realm', async () => {
    const p = await live();
    await credit(p, 'tokens', 9, { realmId: 'permanent' });
    const bought = await buy(p, { itemTypeKey: 'badge', realmId: 'permanent' });
    const permanent = (await suite.core.economy.listInventories(suite.db, p.env, p.id, {})).items.find((i) => i.realmId === 'permanent')!;
    expect(bought.granted?.inventoryId).toBe(permanent.id);
    expect(bought.charges.map((c) => [c.inventoryId, c.balanceAfter])).toEqual([[permanent.id, 6]]);
  });
});
