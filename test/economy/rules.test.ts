/**
 * The economy's rules (docs/economy.md), called straight on core's services with no route in between:
 * which realms are open, how realm and currency manifests are read, inventories made when missing,
 * what each move refuses (with its details) and that a refusal changes nothing, caps, allowances, the
 * engine's own reasons, choosing an inventory, the ledger's filters and pages, a player's deletion, and
 * one wording for every move. Each test runs in a transaction rolled back after it
 * (test/support/domain.ts).
 *
 * The HTTP side (status codes, error bodies with `body.`/`path.` fields, validation by the routes'
 * schemas, credentials, Idempotency-Key replays and the money engine's round trips) is in
 * test/economy/economy.test.ts and test/economy/engine.test.ts.
 */
import { ENGINE_REASONS, MAX_BALANCE } from '@hearth/core/contract';
import { removeManifest } from '@hearth/core/manifests';
import type { MoveKind, MoveRequest } from '@hearth/core/economy';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { currency, realm, standardManifests } from '../support/manifests';
import { economyRealmsAndCurrencies, potionAndSwordForGold } from '../support/fixtures/economy';

const suite = domainSuite({ manifests: [...standardManifests(), ...economyRealmsAndCurrencies(), ...potionAndSwordForGold()] });
type Player = { id: string; env: EnvironmentContext };
const live = () => suite.player('alpha-live');

const move = (p: Player, currencyKey: string, kind: MoveKind, request: MoveRequest) =>
  suite.core.economy.move(suite.db, p.env, p.id, currencyKey, kind, request);
const ledger = async (p: Player, q: Parameters<typeof suite.core.economy.ledger>[3] = {}) => suite.core.economy.ledger(suite.db, p.env, p.id, q);
const balances = async (p: Player, inventory = 'account') => (await suite.core.economy.balances(suite.db, p.env, p.id, inventory, {})).items;

describe('realms', () => {
  test('the open realms are the switched-on, started and unended ones, newest first, in pages; current is the newest, null while none is open', async () => {
    const env = await suite.environment('alpha-live');
    expect(await suite.core.realms.listOpen(suite.db, env, {})).toEqual({
      items: [
        { id: 's2', number: 2, key: 's2', name: 'Season 2', enabled: true, visible: false, startAt: '2025-06-01T00:00:00.123Z', endAt: null },
        { id: 'permanent', number: 0, key: 'permanent', name: 'Forever', enabled: true, visible: true, startAt: '2020-01-01T00:00:00.000Z', endAt: null },
      ],
      next: null,
    });
    const first = await suite.core.realms.listOpen(suite.db, env, { limit: 1 });
    expect(first.items.map((r) => r.id)).toEqual(['s2']);
    expect((await suite.core.realms.listOpen(suite.db, env, { limit: 1, cursor: first.next! })).items.map((r) => r.id)).toEqual(['permanent']);
    expect(await suite.core.realms.current(suite.db, env.id)).toMatchObject({ id: 's2', number: 2 });

    const test = await suite.environment('alpha-test');
    expect(await suite.core.realms.current(suite.db, test.id)).toBeNull();
    expect(await suite.core.realms.listOpen(suite.db, test, {})).toEqual({ items: [], next: null });
  });

  test('the definitions are every realm by number, ended and future ones too, switched off with enabled: false', async () => {
    const env = await suite.environment('alpha-live');
    const page = await suite.core.realms.definitions(suite.db, env, {});
    expect(page.items.map((r) => [r.number, r.enabled, r.endAt])).toEqual([
      [0, true, null],
      [1, true, '2024-06-01T00:00:00.000Z'],
      [2, true, null],
      [3, true, null],
      [4, false, null],
    ]);
    const first = await suite.core.realms.definitions(suite.db, env, { limit: 3 });
    expect((await suite.core.realms.definitions(suite.db, env, { limit: 3, cursor: first.next! })).items.map((r) => r.number)).toEqual([3, 4]);
  });

  test('realm manifests: a number another realm holds, an end before the start, and an ending permanent realm are refused; deleted realms vanish', async () => {
    await expect(suite.apply([realm('dup', { environment: 'alpha-live', number: 1, name: 'Dup', startAt: '2024-01-01T00:00:00Z' })])).rejects.toThrow(
      /spec\.number.*season-1/,
    );
    await expect(
      suite.apply([realm('backwards', { environment: 'alpha-live', number: 9, name: 'B', startAt: '2024-01-01T00:00:00Z', endAt: '2023-01-01T00:00:00Z' })]),
    ).rejects.toThrow(/spec\.endAt/);
    await expect(
      suite.apply([realm('forever-ends', { environment: 'alpha-test', number: 0, name: 'F', startAt: '2024-01-01T00:00:00Z', endAt: '2030-01-01T00:00:00Z' })]),
    ).rejects.toThrow(/endAt/);
    const test = await suite.environment('alpha-test');
    await suite.apply([realm('brief', { environment: 'alpha-test', number: 7, name: 'Brief', startAt: '2024-01-01T00:00:00Z' })]);
    expect(await suite.core.realms.current(suite.db, test.id)).toMatchObject({ id: 'brief' });
    expect((await removeManifest(suite.db, { kind: 'Realm', namespace: 'tests', name: 'brief' }, suite.core.bus)).action).toBe('removed');
    expect(await suite.core.realms.current(suite.db, test.id)).toBeNull();
    expect(await suite.core.realms.definitions(suite.db, test, {})).toEqual({ items: [], next: null });
  });
});

describe('currency definitions', () => {
  test('every currency by key with its fields, switched-off ones with enabled: false, deleted ones not at all', async () => {
    const env = await suite.environment('alpha-live');
    expect((await suite.core.realms.currencyDefinitions(suite.db, env, {})).items).toEqual([
      { key: 'energy', name: 'Energy', description: null, icon: null, scope: 'account', kind: 'consumed', max: null, enabled: true },
      { key: 'gems', name: 'Gems', description: 'Premium', icon: null, scope: 'account', kind: 'balance', max: null, enabled: true },
      { key: 'gold', name: 'Gold', description: null, icon: 'https://cdn.example/gold.png', scope: 'account', kind: 'balance', max: 1000, enabled: true },
      { key: 'retired', name: 'Old coins', description: null, icon: null, scope: 'account', kind: 'balance', max: null, enabled: false },
      { key: 'season.tokens', name: 'Season tokens', description: null, icon: null, scope: 'realm', kind: 'balance', max: null, enabled: true },
    ]);
    const test = await suite.environment('alpha-test');
    const keys = async () => (await suite.core.realms.currencyDefinitions(suite.db, test, {})).items.map((c) => c.key);
    await suite.apply([currency('fleeting', { environment: 'alpha-test', name: 'Fleeting', scope: 'account', kind: 'balance' })]);
    expect(await keys()).toEqual(['fleeting', 'stars']);
    await removeManifest(suite.db, { kind: 'Currency', namespace: 'tests', name: 'fleeting' }, suite.core.bus);
    expect(await keys()).toEqual(['stars']);
  });
});

describe('inventories', () => {
  test('account and current are made when missing and found after; the list holds them in the order made, in pages; an id reads one', async () => {
    const p = await live();
    const list = (q = {}) => suite.core.economy.listInventories(suite.db, p.env, p.id, q);
    const resolve = (selector: string) => suite.core.economy.resolve(suite.db, p.env, p.id, selector);
    expect(await list()).toEqual({ items: [], next: null });
    const account = await resolve('account');
    expect(account).toEqual({ id: expect.any(String), realmId: null });
    expect(await resolve('account')).toEqual(account);
    const current = await resolve('current');
    expect(current).toEqual({ id: expect.any(String), realmId: 's2' });
    expect(current.id).not.toBe(account.id);
    expect(await list()).toEqual({ items: [account, current], next: null });
    const first = await list({ limit: 1 });
    expect(first.items).toEqual([account]);
    expect(await list({ limit: 1, cursor: first.next })).toEqual({ items: [current], next: null });
    expect(await resolve(current.id)).toEqual(current);
  });

  test('refusals: another player’s or an unknown inventory, an unknown player or one of another environment, no current realm; none makes an inventory', async () => {
    const a = await live();
    const b = await live();
    const aAccount = await suite.core.economy.resolve(suite.db, a.env, a.id, 'account');
    await suite.expectRefusal(() => suite.core.economy.resolve(suite.db, b.env, b.id, aAccount.id), 'not-found', 'inventory');
    await suite.expectRefusal(() => suite.core.economy.resolve(suite.db, b.env, b.id, 'nope'), 'not-found', 'inventory');
    await suite.expectRefusal(() => suite.core.economy.resolve(suite.db, a.env, 'unknown-player', 'account'), 'not-found');
    await suite.expectRefusal(() => suite.core.economy.listInventories(suite.db, a.env, 'unknown-player', {}), 'not-found', 'playerId');
    const test = await suite.environment('alpha-test');
    await suite.expectRefusal(() => suite.core.economy.resolve(suite.db, test, a.id, 'account'), 'not-found');
    const t = await suite.player('alpha-test');
    await suite.expectRefusal(() => suite.core.economy.resolve(suite.db, t.env, t.id, 'current'), 'no-current-realm');
    await suite.expectRefusal(() => suite.core.economy.balances(suite.db, t.env, t.id, 'current', {}), 'no-current-realm');
    expect((await suite.core.economy.listInventories(suite.db, t.env, t.id, {})).items).toEqual([]);
    expect((await suite.core.economy.listInventories(suite.db, b.env, b.id, {})).items).toEqual([]);
  });
});

describe('moves', () => {
  test('a credit answers a Movement, writes one ledger entry with the balance after, and the balance', async () => {
    const p = await live();
    const moved = await move(p, 'gems', 'credit', { amount: 250, reason: 'quest_reward', reference: 'quest 7' });
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    expect(moved).toEqual({ transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gems', amount: 250, balanceAfter: 250, replayed: false });
    expect((await ledger(p)).items).toEqual([
      {
        id: moved.transactionId,
        inventoryId: account.id,
        currencyKey: 'gems',
        amount: 250,
        balanceAfter: 250,
        reason: 'quest_reward',
        reference: 'quest 7',
        createdAt: expect.any(String),
      },
    ]);
    expect(await balances(p)).toEqual([{ currencyKey: 'gems', amount: 250 }]);
  });

  test('debit takes from a balance; insufficient-balance carries held and requested and changes nothing', async () => {
    const p = await live();
    await move(p, 'gems', 'credit', { amount: 100, reason: 'grant' });
    const refused = await suite.expectRefusal(() => move(p, 'gems', 'debit', { amount: 101, reason: 'shop' }), 'insufficient-balance');
    expect(refused.details).toEqual({ currencyKey: 'gems', held: 100, requested: 101 });
    expect((await ledger(p)).items).toHaveLength(1);
    expect(await balances(p)).toEqual([{ currencyKey: 'gems', amount: 100 }]);
    await move(p, 'gems', 'credit', { amount: 1, reason: 'grant' });
    expect(await move(p, 'gems', 'debit', { amount: 101, reason: 'shop' })).toMatchObject({ amount: -101, balanceAfter: 0 });
    expect((await ledger(p)).items.map((e) => [e.amount, e.balanceAfter])).toEqual([
      [-101, 0],
      [1, 101],
      [100, 100],
    ]);
    await suite.expectRefusal(() => move(p, 'gems', 'debit', { amount: 1, reason: 'shop' }), 'insufficient-balance');
  });

  test('balance-cap: a credit or a refund past the maximum is refused, up to it is fine; no balance passes 2^53-1', async () => {
    const p = await live();
    expect((await move(p, 'gold', 'credit', { amount: 1000, reason: 'grant' })).balanceAfter).toBe(1000);
    const refused = await suite.expectRefusal(() => move(p, 'gold', 'credit', { amount: 1, reason: 'grant' }), 'balance-cap');
    expect(refused.details).toMatchObject({ currencyKey: 'gold', held: 1000, requested: 1 });
    await suite.expectRefusal(() => move(p, 'gold', 'refund', { amount: 1, reason: 'refund' }), 'balance-cap');
    // A balance near the ceiling of exact numbers (put there directly: a billion credits a test cannot make).
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    await suite.db('balances').insert({ inventory_id: account.id, currency_key: 'gems', amount: String(MAX_BALANCE - 5) });
    expect((await move(p, 'gems', 'credit', { amount: 5, reason: 'grant' })).balanceAfter).toBe(MAX_BALANCE);
    await suite.expectRefusal(() => move(p, 'gems', 'credit', { amount: 1, reason: 'grant' }), 'balance-cap');
    expect((await suite.db('balances').where({ inventory_id: account.id, currency_key: 'gems' }).first()).amount).toBe(String(MAX_BALANCE));
    expect((await move(p, 'gems', 'debit', { amount: 1_000_000_000, reason: 'shop' })).balanceAfter).toBe(MAX_BALANCE - 1_000_000_000);
    expect(await balances(p)).toEqual([
      { currencyKey: 'gems', amount: MAX_BALANCE - 1_000_000_000 },
      { currencyKey: 'gold', amount: 1000 },
    ]);
  });

  test('consume adds to what was spent within the allowance; refund lowers it; allowance-exceeded carries the allowance; refund credits a balance currency', async () => {
    const p = await live();
    expect(await move(p, 'energy', 'consume', { amount: 30, allowance: 50, reason: 'match' })).toMatchObject({ amount: 30, balanceAfter: 30 });
    const refused = await suite.expectRefusal(() => move(p, 'energy', 'consume', { amount: 21, allowance: 50, reason: 'match' }), 'allowance-exceeded');
    expect(refused.details).toEqual({ currencyKey: 'energy', allowance: 50, held: 30, requested: 21 });
    expect((await move(p, 'energy', 'consume', { amount: 20, allowance: 50, reason: 'match' })).balanceAfter).toBe(50);
    expect(await move(p, 'energy', 'refund', { amount: 45, reason: 'match_cancelled' })).toMatchObject({ amount: -45, balanceAfter: 5 });
    const under = await suite.expectRefusal(() => move(p, 'energy', 'refund', { amount: 6, reason: 'match_cancelled' }), 'insufficient-balance');
    expect(under.details).toEqual({ currencyKey: 'energy', held: 5, requested: 6 });
    expect(await move(p, 'gems', 'refund', { amount: 7, reason: 'shop_refund' })).toMatchObject({ amount: 7, balanceAfter: 7 });
    expect((await ledger(p)).items.map((e) => e.amount)).toEqual([7, -45, 20, 30]);
  });

  test('a currency moved by a kind it does not take is invalid on currencyKey, and changes nothing', async () => {
    const p = await live();
    await suite.expectRefusal(() => move(p, 'energy', 'credit', { amount: 1, reason: 'r' }), 'invalid-request', 'currencyKey');
    await suite.expectRefusal(() => move(p, 'energy', 'debit', { amount: 1, reason: 'r' }), 'invalid-request', 'currencyKey');
    await suite.expectRefusal(() => move(p, 'gems', 'consume', { amount: 1, allowance: 5, reason: 'r' }), 'invalid-request', 'currencyKey');
    expect((await ledger(p)).items).toEqual([]);
  });

  test("the engine's own reasons are refused on every move (invalid-request on reason) and change nothing; a reason that merely starts like one is a game's", async () => {
    const p = await live();
    await move(p, 'gems', 'credit', { amount: 10, reason: 'setup' });
    await move(p, 'energy', 'consume', { amount: 2, allowance: 10, reason: 'setup' });
    const before = await ledger(p);
    const reserved = Object.values(ENGINE_REASONS);
    expect(reserved).toEqual(['purchase', 'skill-node', 'commerce', 'commerce-refund', 'commerce-chargeback']);
    for (const reason of reserved) {
      for (const [currencyKey, kind, extra] of [
        ['gems', 'credit', {}],
        ['gems', 'debit', {}],
        ['gems', 'refund', {}],
        ['energy', 'consume', { allowance: 10 }],
      ] as const) {
        const refused = await suite.expectRefusal(
          () => move(p, currencyKey, kind, { amount: 1, reason, reference: 'order-1', ...extra }),
          'invalid-request',
          'reason',
        );
        expect(refused.message).toContain(`"${reason}" is a reason the money engine keeps for its own moves`);
      }
    }
    expect(await ledger(p)).toEqual(before);
    expect(await move(p, 'gems', 'credit', { amount: 5, reason: 'commerce.bonus' })).toMatchObject({ amount: 5, balanceAfter: 15 });
    expect((await ledger(p)).items[0]).toMatchObject({ reason: 'commerce.bonus', amount: 5 });
  });

  test('not-found names the currency, player, inventory or realm; a switched-off currency is disabled; none changes anything', async () => {
    const p = await live();
    expect(await suite.refusal(() => move(p, 'silver', 'credit', { amount: 1, reason: 'r' }))).toMatchObject({
      code: 'not-found',
      details: { field: 'currencyKey' },
    });
    expect(await suite.refusal(() => move({ ...p, id: 'nobody' }, 'gems', 'credit', { amount: 1, reason: 'r' }))).toMatchObject({
      code: 'not-found',
      details: { field: 'playerId' },
    });
    await suite.expectRefusal(() => move(p, 'gems', 'credit', { amount: 1, reason: 'r', inventoryId: 'nope' }), 'not-found', 'inventoryId');
    await suite.expectRefusal(() => move(p, 'season.tokens', 'credit', { amount: 1, reason: 'r', realmId: 'no-such-realm' }), 'not-found', 'realmId');
    expect(await suite.refusal(() => move(p, 'retired', 'credit', { amount: 1, reason: 'r' }))).toEqual({
      code: 'disabled',
      message: 'The currency retired is switched off.',
      details: { currencyKey: 'retired' },
    });
    expect((await ledger(p)).items).toHaveLength(0);
  });

  test('choosing an inventory: the definition’s scope, a realm id (made when missing), null for the account, an inventory id; mismatches refused', async () => {
    const p = await live();
    const toCurrent = await move(p, 'season.tokens', 'credit', { amount: 5, reason: 'r' });
    const current = await suite.core.economy.resolve(suite.db, p.env, p.id, 'current');
    expect(current.realmId).toBe('s2');
    expect(toCurrent.inventoryId).toBe(current.id);
    // An ended realm still takes a server's move (settling a season); its inventory is made.
    const toSeason1 = await move(p, 'season.tokens', 'credit', { amount: 3, reason: 'r', realmId: 'season-1' });
    expect((await suite.core.economy.listInventories(suite.db, p.env, p.id, {})).items).toEqual([current, { id: toSeason1.inventoryId, realmId: 'season-1' }]);
    expect((await move(p, 'season.tokens', 'debit', { amount: 2, reason: 'r', inventoryId: toSeason1.inventoryId })).balanceAfter).toBe(1);
    const toAccount = await move(p, 'gems', 'credit', { amount: 4, reason: 'r', realmId: null });
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    expect(toAccount.inventoryId).toBe(account.id);
    await suite.expectRefusal(() => move(p, 'gems', 'credit', { amount: 1, reason: 'r', realmId: 's2' }), 'invalid-request', 'realmId');
    await suite.expectRefusal(() => move(p, 'gems', 'credit', { amount: 1, reason: 'r', inventoryId: current.id }), 'invalid-request', 'inventoryId');
    await suite.expectRefusal(() => move(p, 'season.tokens', 'credit', { amount: 1, reason: 'r', realmId: null }), 'invalid-request', 'realmId');
    await suite.expectRefusal(() => move(p, 'season.tokens', 'credit', { amount: 1, reason: 'r', inventoryId: account.id }), 'invalid-request', 'inventoryId');
    await suite.expectRefusal(
      () => move(p, 'gems', 'credit', { amount: 1, reason: 'r', inventoryId: account.id, realmId: null }),
      'invalid-request',
      'realmId',
    );
    // Another player's inventory is not one of this player's.
    const other = await live();
    await suite.expectRefusal(() => move(other, 'gems', 'credit', { amount: 1, reason: 'r', inventoryId: account.id }), 'not-found', 'inventoryId');
    // A per-realm currency with no realm open.
    const t = await suite.player('alpha-test');
    await suite.expectRefusal(() => move(t, 'stars', 'credit', { amount: 1, reason: 'r' }), 'no-current-realm');
    expect(await suite.core.economy.balances(suite.db, p.env, p.id, toSeason1.inventoryId, {})).toEqual({
      items: [{ currencyKey: 'season.tokens', amount: 1 }],
      next: null,
      inventory: { id: toSeason1.inventoryId, realmId: 'season-1' },
    });
    expect(await balances(p)).toEqual([{ currencyKey: 'gems', amount: 4 }]);
  });
});

describe('the ledger', () => {
  test('newest first, filtered by currency and inventory, in pages whose cursors belong to their filters', async () => {
    const p = await live();
    const made = [
      await move(p, 'gems', 'credit', { amount: 10, reason: 'a' }),
      await move(p, 'season.tokens', 'credit', { amount: 3, reason: 'b' }),
      await move(p, 'gems', 'debit', { amount: 4, reason: 'c', reference: 'order 1' }),
      await move(p, 'energy', 'consume', { amount: 2, allowance: 10, reason: 'd' }),
    ];
    const all = await ledger(p);
    expect(all.items.map((e) => e.id)).toEqual(made.map((m) => m.transactionId).reverse());
    expect(all.items[1]).toMatchObject({ currencyKey: 'gems', amount: -4, balanceAfter: 6, reason: 'c', reference: 'order 1' });
    expect((await ledger(p, { currencyKey: 'gems' })).items.map((e) => e.amount)).toEqual([-4, 10]);
    expect((await ledger(p, { inventoryId: made[1].inventoryId })).items.map((e) => e.reason)).toEqual(['b']);
    expect((await ledger(p, { inventoryId: made[0].inventoryId, currencyKey: 'energy' })).items.map((e) => e.reason)).toEqual(['d']);
    const first = await ledger(p, { limit: 2 });
    expect(first.items.map((e) => e.reason)).toEqual(['d', 'c']);
    expect(await ledger(p, { limit: 2, cursor: first.next! })).toEqual({
      items: [expect.objectContaining({ reason: 'b' }), expect.objectContaining({ reason: 'a' })],
      next: null,
    });
    await suite.expectRefusal(() => ledger(p, { currencyKey: 'gems', cursor: first.next! }), 'invalid-request', 'cursor');
    await suite.expectRefusal(() => ledger({ ...p, id: 'nobody' }), 'not-found', 'playerId');
  });

  test('deleting a player takes their inventories, balances and ledger', async () => {
    const p = await live();
    await move(p, 'gems', 'credit', { amount: 10, reason: 'a' });
    const inventories = (await suite.core.economy.listInventories(suite.db, p.env, p.id, {})).items.map((i) => i.id);
    await suite.core.deletePlayer(suite.db, p.env, p.id);
    expect(await suite.db('ledger_entries').where({ player_id: p.id })).toEqual([]);
    expect(await suite.db('inventories').where({ player_id: p.id })).toEqual([]);
    expect(await suite.db('balances').whereIn('inventory_id', inventories)).toEqual([]);
  });
});

describe('one wording for every move', () => {
  test('owned-limit is worded the same by a purchase and by a grant; a place that does not fit is worded the same by a credit and a purchase', async () => {
    const p = await live();
    await move(p, 'gold', 'credit', { amount: 100, reason: 'setup' });
    await suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'sword' }, 'server');
    const before = await balances(p);
    const bought = await suite.refusal(() => suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'sword' }, 'server'));
    const granted = await suite.refusal(() => suite.core.items.grant(suite.db, p.env, p.id, { itemTypeKey: 'sword' }));
    expect(granted).toEqual(bought);
    expect(bought).toMatchObject({ code: 'owned-limit', details: { itemTypeKey: 'sword', held: 1, requested: 1, limit: 1 } });
    expect(await balances(p)).toEqual(before);

    // A realm the environment has would do; none of alpha-live's fits the account, so realmId null with the account's id must fit.
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    const credit = await suite.refusal(() => move(p, 'gold', 'credit', { amount: 1, reason: 'x', inventoryId: account.id, realmId: null }));
    const buy = await suite.refusal(() =>
      suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'potion', inventoryId: account.id, realmId: null }, 'server'),
    );
    expect(credit).toEqual(buy);
    expect(credit).toMatchObject({ code: 'invalid-request', details: { field: 'realmId' } });
    expect(await balances(p)).toEqual(before);
  });
});
