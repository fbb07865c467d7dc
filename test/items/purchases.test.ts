/**
 * Buying items (spec §4 Game services "Buying", §2 Purchase<T>; docs/economy.md "Buying"), over real
 * HTTP: the Purchase answered, the status of each refusal, the body's schema, player tokens and `me`,
 * replays under an Idempotency-Key, and parallel purchases that must never pass a balance or a limit.
 * The rules themselves (price rules, allowances, where a purchase pays from and puts, each refusal
 * changing nothing) are held on core's purchases service in test/items/rules.test.ts.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { forSale, permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { shopItemTypes } from '../support/fixtures/items';

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `p-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), ...permanentAndSeason1Realms(), ...shopCurrencies(), ...shopItemTypes(), forSale('relic', { purchasable: false })],
  });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const buy = (playerId: string, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/purchases/items`, { token: opts.token ?? key, body, headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {} });
const credit = async (playerId: string, currencyKey: string, amount: number, extra: Record<string, unknown> = {}) => {
  const reply = await call(h.base, 'POST', `/players/${playerId}/currencies/${currencyKey}/credit`, {
    token: key,
    body: { amount, reason: 'setup', ...extra },
    headers: { 'Idempotency-Key': newKey() },
  });
  expect(reply.status).toBe(200);
};
const ok = <T = any>(reply: Reply<T>): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.anything() });
  return reply.body;
};
const balances = async (playerId: string, inventory = 'account') =>
  Object.fromEntries(
    (
      ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/balances`, { token: key })).items as { currencyKey: string; amount: number }[]
    ).map((b) => [b.currencyKey, b.amount]),
  );
const stackOf = async (playerId: string, itemTypeKey: string, inventory = 'account') =>
  (
    ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/item-stacks`, { token: key })).items as {
      itemTypeKey: string;
      quantity: number;
    }[]
  ).find((s) => s.itemTypeKey === itemTypeKey)?.quantity ?? 0;
const ledger = async (playerId: string) => ok(await call(h.base, 'GET', `/players/${playerId}/ledger?limit=200`, { token: key })).items as any[];

/** Everything a refusal must leave as it was: balances, stacks, items and the ledger. */
async function snapshot(playerId: string) {
  return {
    balances: await balances(playerId),
    stacks: ok(await call(h.base, 'GET', `/players/${playerId}/inventories/account/item-stacks`, { token: key })).items,
    items: ok(await call(h.base, 'GET', `/players/${playerId}/inventories/account/items`, { token: key })).items,
    ledger: await ledger(playerId),
  };
}

describe('buying', () => {
  // What a purchase pays and grants, price rule by price rule, and what it writes to the ledger, is
  // held in test/items/rules.test.ts; here, the Purchase as the route answers it.
  test('a purchase answers the Purchase: each charge with the balance after it, and the stack granted where', async () => {
    const p = await player('buy-all');
    await credit(p, 'gold', 100);
    await credit(p, 'gems', 10);
    const bought = ok(await buy(p, { itemTypeKey: 'potion', quantity: 3 }));
    const account = ok(await call(h.base, 'GET', `/players/${p}/inventories/account`, { token: key }));
    expect(bought).toEqual({
      replayed: false,
      charges: [
        { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gems', amount: -6, balanceAfter: 4, replayed: false },
        { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gold', amount: -30, balanceAfter: 70, replayed: false },
      ],
      granted: { inventoryId: account.id, itemTypeKey: 'potion', stack: { itemTypeKey: 'potion', quantity: 3 }, items: [], alreadyGranted: false },
    });
    expect(await balances(p)).toEqual({ gems: 4, gold: 70 });
  });

  test('payWith: required for priceRule any, and must name one of the prices (invalid-request on body.payWith, nothing charged)', async () => {
    const p = await player('buy-paywith');
    await credit(p, 'gold', 1000);
    await credit(p, 'gems', 100);
    const before = await snapshot(p);
    expectError(await buy(p, { itemTypeKey: 'blade' }), 400, 'invalid-request', 'body.payWith');
    expectError(await buy(p, { itemTypeKey: 'blade', payWith: 'energy' }), 400, 'invalid-request', 'body.payWith');
    expectError(await buy(p, { itemTypeKey: 'potion', payWith: 'tokens' }), 400, 'invalid-request', 'body.payWith');
    expectError(await buy(p, { itemTypeKey: 'blade', payWith: 'no such key!' }), 400, 'invalid-request', 'body.payWith');
    expect(await snapshot(p)).toEqual(before);
  });

  test('the body: quantity 1 to 100, itemTypeKey required, no unknown field', async () => {
    const p = await player('buy-body');
    await credit(p, 'gold', 1000);
    await credit(p, 'gems', 1000);
    const before = await snapshot(p);
    for (const quantity of [0, 101, 1.5, -1]) expectError(await buy(p, { itemTypeKey: 'potion', quantity }), 400, 'invalid-request', 'body.quantity');
    expectError(await buy(p, {}), 400, 'invalid-request', 'body.itemTypeKey');
    expectError(await buy(p, { itemTypeKey: 'potion', grantKey: 'x' }), 400, 'invalid-request', 'body.grantKey');
    expectError(await buy(p, { itemTypeKey: 'potion', allowances: { energy: -1 } }), 400, 'invalid-request');
    expectError(await buy(p, { itemTypeKey: 'potion', inventoryId: 'nope', realmId: null }), 400, 'invalid-request', 'body.realmId');
    expect(await snapshot(p)).toEqual(before);
    // 20 potions fit maxOwned exactly.
    expect(ok(await buy(p, { itemTypeKey: 'potion', quantity: 20 })).charges.map((c: any) => c.amount)).toEqual([-40, -200]);
  });
});

describe('consumed currencies and allowances', () => {
  test('allowance-exceeded and balance-cap are 409 with details; a consumed price without its allowance is 400 on body.allowances', async () => {
    const p = await player('buy-consumed');
    expect(ok(await buy(p, { itemTypeKey: 'boost', quantity: 16, allowances: { energy: 480 } })).charges[0].balanceAfter).toBe(480);
    const refused = expectError(await buy(p, { itemTypeKey: 'boost', allowances: { energy: 500 } }), 409, 'allowance-exceeded');
    expect(refused.details).toEqual({ currencyKey: 'energy', held: 480, requested: 30, allowance: 500 });
    const capped = expectError(await buy(p, { itemTypeKey: 'boost', allowances: { energy: 10_000 } }), 409, 'balance-cap');
    expect(capped.details).toEqual({ currencyKey: 'energy', held: 480, requested: 30 });
    const missing = expectError(await buy(p, { itemTypeKey: 'mixed' }), 400, 'invalid-request', 'body.allowances');
    expect(missing.details.currencyKey).toBe('energy');
  });
});

describe('player tokens', () => {
  test('a player buys for themselves as `me` with balance currencies; naming an id is forbidden', async () => {
    const signed = await signIn(h.base, key, 'buy-player');
    const p = signed.player.id;
    await credit(p, 'gold', 150);
    const bought = ok(await buy('me', { itemTypeKey: 'blade', payWith: 'gold' }, { token: signed.accessToken }));
    expect(bought.charges.map((c: any) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['gold', -100, 50]]);
    expect(bought.granted.items).toHaveLength(1);
    const before = await snapshot(p);
    expectError(await buy(p, { itemTypeKey: 'blade', payWith: 'gold' }, { token: signed.accessToken }), 403, 'forbidden');
    expect(await snapshot(p)).toEqual(before);
  });

  test('a player token sending allowances is forbidden, even where no price needs one; without them a consumed price is invalid-request', async () => {
    const signed = await signIn(h.base, key, 'buy-player-allowances');
    const p = signed.player.id;
    await credit(p, 'gold', 500);
    const before = await snapshot(p);
    expectError(await buy('me', { itemTypeKey: 'boost', allowances: { energy: 100 } }, { token: signed.accessToken }), 403, 'forbidden');
    expectError(await buy('me', { itemTypeKey: 'blade', payWith: 'gold', allowances: {} }, { token: signed.accessToken }), 403, 'forbidden');
    expectError(await buy('me', { itemTypeKey: 'boost' }, { token: signed.accessToken }), 400, 'invalid-request', 'body.allowances');
    expect(await snapshot(p)).toEqual(before);
  });
});

describe('refusals change nothing', () => {
  test('insufficient-balance and owned-limit are 409 with details, not-purchasable and disabled 409, not-found 404; a place that does not fit is 400 on its body field; none changes anything', async () => {
    const p = await player('buy-refusals');
    await credit(p, 'gold', 25);
    await credit(p, 'gems', 100);
    const before = await snapshot(p);
    expect(expectError(await buy(p, { itemTypeKey: 'potion', quantity: 3 }), 409, 'insufficient-balance').details).toEqual({
      currencyKey: 'gold',
      held: 25,
      requested: 30,
    });
    expect(expectError(await buy(p, { itemTypeKey: 'blade', payWith: 'gems', quantity: 3 }), 409, 'owned-limit').details).toEqual({
      itemTypeKey: 'blade',
      held: 0,
      requested: 3,
      limit: 2,
    });
    expect(expectError(await buy(p, { itemTypeKey: 'relic' }), 409, 'not-purchasable').details).toEqual({ itemTypeKey: 'relic' });
    expect(expectError(await buy(p, { itemTypeKey: 'frozenpriced' }), 409, 'disabled').details).toEqual({ itemTypeKey: 'frozenpriced', currencyKey: 'frozen' });
    expectError(await buy(p, { itemTypeKey: 'unknown' }), 404, 'not-found');
    expectError(await buy('nobody', { itemTypeKey: 'potion' }), 404, 'not-found');
    expectError(await buy('me', { itemTypeKey: 'potion' }), 404, 'not-found');
    expectError(await buy(p, { itemTypeKey: 'potion', realmId: 'no-such-realm' }), 404, 'not-found');
    expectError(await buy(p, { itemTypeKey: 'banner', realmId: null }), 400, 'invalid-request', 'body.realmId');
    expect(await snapshot(p)).toEqual(before);
  });
});

describe('Idempotency-Key', () => {
  test('a retry under the same key answers the first purchase with replayed: true and granted: null, charging nothing again', async () => {
    const p = await player('buy-replay');
    await credit(p, 'gold', 100);
    await credit(p, 'gems', 100);
    const idem = newKey();
    const first = await buy(p, { itemTypeKey: 'potion', quantity: 2 }, { idem });
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    const again = await buy(p, { itemTypeKey: 'potion', quantity: 2 }, { idem });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(ok(again)).toEqual({ replayed: true, charges: first.body.charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
    expect(await balances(p)).toEqual({ gems: 96, gold: 80 });
    expect(await stackOf(p, 'potion')).toBe(2);
    expect((await ledger(p)).filter((e) => e.reason === 'purchase')).toHaveLength(2);
    // The same key for another request.
    expectError(await buy(p, { itemTypeKey: 'potion', quantity: 3 }, { idem }), 409, 'idempotency-conflict');
    // Without a key every request is a purchase.
    ok(await buy(p, { itemTypeKey: 'potion' }));
    ok(await buy(p, { itemTypeKey: 'potion' }));
    expect(await stackOf(p, 'potion')).toBe(4);
  });

  test("a player's key is their own: the same key from the player and from the server are two purchases", async () => {
    const signed = await signIn(h.base, key, 'buy-replay-player');
    const p = signed.player.id;
    await credit(p, 'gold', 300);
    const idem = newKey();
    ok(await buy('me', { itemTypeKey: 'blade', payWith: 'gold' }, { token: signed.accessToken, idem }));
    expect(ok(await buy('me', { itemTypeKey: 'blade', payWith: 'gold' }, { token: signed.accessToken, idem })).replayed).toBe(true);
    expect(ok(await buy(p, { itemTypeKey: 'blade', payWith: 'gold' }, { idem })).replayed).toBe(false);
    expect(await balances(p)).toEqual({ gold: 100 });
  });

  test('a refused purchase keeps no record: the same request under the same key acts once it can', async () => {
    const p = await player('buy-retry-refused');
    const idem = newKey();
    expectError(await buy(p, { itemTypeKey: 'blade', payWith: 'gems' }, { idem }), 409, 'insufficient-balance');
    await credit(p, 'gems', 5);
    const acted = ok(await buy(p, { itemTypeKey: 'blade', payWith: 'gems' }, { idem }));
    expect(acted.replayed).toBe(false);
    expect(acted.charges[0].balanceAfter).toBe(0);
  });

  test('parallel retries of one key act once', async () => {
    const p = await player('buy-race-key');
    await credit(p, 'gold', 1000);
    await credit(p, 'gems', 1000);
    const idem = newKey();
    const replies = await Promise.all(Array.from({ length: 6 }, () => buy(p, { itemTypeKey: 'potion', quantity: 5 }, { idem })));
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(replies.filter((r) => !r.body.replayed)).toHaveLength(1);
    expect(await balances(p)).toEqual({ gems: 990, gold: 950 });
    expect(await stackOf(p, 'potion')).toBe(5);
  });
});

describe('parallel purchases', () => {
  test('never spend past a balance nor pass maxOwned: of 12 parallel purchases only what fits acts', async () => {
    const p = await player('buy-race-balance');
    await credit(p, 'gems', 25);
    const replies = await Promise.all(
      Array.from({ length: 12 }, () =>
        buy(p, { itemTypeKey: 'blade', payWith: 'gems' }).then(
          (r) => r,
          (e) => e,
        ),
      ),
    );
    // maxOwned 2 of blades also limits: at most 2 act, the rest are owned-limit or insufficient-balance.
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    expect(new Set(replies.filter((r) => r.status !== 200).map((r) => r.body.error))).toEqual(new Set(['owned-limit']));
    expect(await balances(p)).toEqual({ gems: 15 });
    const q = await player('buy-race-balance-2');
    await credit(q, 'gold', 50);
    await credit(q, 'gems', 1000);
    const potions = await Promise.all(Array.from({ length: 12 }, () => buy(q, { itemTypeKey: 'potion' })));
    expect(potions.filter((r) => r.status === 200)).toHaveLength(5);
    expect(new Set(potions.filter((r) => r.status !== 200).map((r) => r.body.error))).toEqual(new Set(['insufficient-balance']));
    expect(await balances(q)).toEqual({ gems: 990, gold: 0 });
    expect(await stackOf(q, 'potion')).toBe(5);
  });
});
