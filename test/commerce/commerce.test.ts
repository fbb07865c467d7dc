/**
 * The commerce routes (spec §4 Commerce) against the stand-in store: the catalog, identify and its
 * limit, orders and their refusals, authorizations and reconciliation settling from the store's word,
 * entitlements, isolation between environments, and exactly one finalize and one grant per order
 * under racing authorizations, reconciliations and retries.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { StoreStandIn } from '../support/store-standin';
import { eventually } from '../support/wait';
import { environment, project, serverKey } from '../support/manifests';
import {
  APP_ID,
  IDENTITY,
  STORE_KEY,
  STORE_KEY_VARIABLE,
  authorize,
  commerceManifests,
  identifiedBuyer,
  identify,
  newBuyer,
  order,
  product,
  reconcile,
  storeSettings,
} from './helpers';

let h: Harness;
let store: StoreStandIn;

beforeAll(async () => {
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  h = await startHarness({ manifests: commerceManifests(store) });
});
afterAll(async () => {
  await h.close();
  await store.stop();
});

function ticketFor(steamId: string, identity = IDENTITY): string {
  return store.issueTicket(steamId, { identity, appid: APP_ID });
}

describe('GET /commerce/catalog', () => {
  test("before identify: priced in USD; switched-off products and other environments' products are not listed", async () => {
    const buyer = await newBuyer(h);
    const reply = await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: buyer.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      products: [
        { sku: 'gem-bundle', name: 'Gem bundle', description: '', currency: 'USD', amount: 199, repeatable: true, active: false },
        { sku: 'gems-100', name: '100 gems', description: '', currency: 'USD', amount: 99, repeatable: true, active: false },
        { sku: 'starter-pack', name: 'Starter pack', description: '', currency: 'USD', amount: 499, repeatable: false, active: false },
      ],
    });
    const tester = await newBuyer(h, 'shop-test-key');
    const other = await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: tester.token });
    expect(other.body.products.map((p: { sku: string }) => p.sku)).toEqual(['test-only']);
  });

  test("after identify: in the wallet's currency, and a product without that price is not listed", async () => {
    const buyer = await identifiedBuyer(h, store, { currency: 'EUR' });
    const reply = await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: buyer.token });
    expect(reply.body.products).toEqual([
      { sku: 'starter-pack', name: 'Starter pack', description: '', currency: 'EUR', amount: 449, repeatable: false, active: false },
    ]);
  });

  test('refusals: an unknown provider, a game that sells through no store, commerce switched off, a server key', async () => {
    const buyer = await newBuyer(h);
    expectError(await call(h.base, 'GET', '/commerce/catalog?provider=other', { token: buyer.token }), 400, 'invalid-request', 'query.provider');
    expect((await call(h.base, 'GET', '/commerce/catalog', { token: buyer.token })).status).toBe(200); // steam is the default
    const unset = await newBuyer(h, 'nostore-live-key');
    expectError(await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: unset.token }), 403, 'service-disabled');
    const closed = await newBuyer(h, 'closed-live-key');
    expectError(await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: closed.token }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: h.serverKeys['shop-live-key'] }), 403, 'forbidden');
  });
});

describe('POST /commerce/store/identify', () => {
  test("{ storeId } from the store's answer; the wallet is kept; the store was asked with the game's identity and key", async () => {
    const buyer = await newBuyer(h);
    store.setUser(buyer.steamId, { country: 'DE', currency: 'EUR', status: 'Active' });
    const ticket = ticketFor(buyer.steamId);
    const reply = await identify(h, buyer, { ticket, identity: IDENTITY });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ storeId: buyer.steamId });
    const auth = store.calls.filter((c) => c.method === 'AuthenticateUserTicket').at(-1)!;
    expect(auth.params).toEqual({ key: STORE_KEY, appid: String(APP_ID), ticket, identity: IDENTITY });
    const account = await h.db('commerce_store_accounts').where({ player_id: buyer.id }).first();
    expect(account).toMatchObject({ store_id: buyer.steamId, currency: 'EUR', country: 'DE', purchase_status: 'Active', provider: 'steam' });
  });

  test('a ticket the store refuses is invalid-ticket and proves nothing', async () => {
    const buyer = await newBuyer(h);
    const made = await identify(h, buyer, { ticket: ticketFor(buyer.steamId, 'another-identity'), identity: IDENTITY });
    expectError(made, 400, 'invalid-ticket');
    expectError(await identify(h, buyer, { ticket: 'ABCD', identity: IDENTITY }), 400, 'invalid-ticket');
    expect(await h.db('commerce_store_accounts').where({ player_id: buyer.id }).first()).toBeUndefined();
  });

  test.each([
    ['a ticket that is not hex', { ticket: 'zz', identity: IDENTITY }, 'body.ticket'],
    ['a ticket of odd length', { ticket: 'ABC', identity: IDENTITY }, 'body.ticket'],
    ['a missing identity', { ticket: 'ABCD' }, 'body.identity'],
    ["another identity string than the game's", { ticket: 'ABCD', identity: 'not-ours' }, 'body.identity'],
    ['a field the route does not take', { ticket: 'ABCD', identity: IDENTITY, steamId: '1' }, 'body.steamId'],
  ])('%s is invalid-request and never reaches the store', async (_name, body, field) => {
    const buyer = await newBuyer(h);
    const before = store.calls.length;
    expectError(await identify(h, buyer, body), 400, 'invalid-request', field);
    expect(store.calls.length).toBe(before);
  });

  test('ten per player per ten minutes: the eleventh is 429 with Retry-After and the headers, and does not reach the store', async () => {
    const { rows } = await h.db.raw('SELECT extract(epoch FROM now())::float8 AS now');
    const left = 600 - (Math.floor(rows[0].now) % 600);
    if (left < 30) await new Promise((resolve) => setTimeout(resolve, (left + 1) * 1000)); // wall time: the limit counts per ten minutes of the database's clock
    const buyer = await newBuyer(h);
    const other = await newBuyer(h);
    const remaining: number[] = [];
    for (let i = 0; i < 10; i++) {
      const reply = await identify(h, buyer, { ticket: ticketFor(buyer.steamId), identity: IDENTITY });
      expect(reply.status).toBe(200);
      remaining.push(Number(reply.headers.get('x-ratelimit-remaining')));
      expect(Number(reply.headers.get('x-ratelimit-limit'))).toBe(10);
    }
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const asked = store.count('AuthenticateUserTicket');
    const refused = await identify(h, buyer, { ticket: ticketFor(buyer.steamId), identity: IDENTITY });
    const body = expectError(refused, 429, 'rate-limited');
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(600);
    expect(body.details).toEqual({ retryAfterSeconds: retry });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(store.count('AuthenticateUserTicket')).toBe(asked);
    // Another player's limit is their own.
    expect((await identify(h, other, { ticket: ticketFor(other.steamId), identity: IDENTITY })).status).toBe(200);
  });

  test("a store that fails is unavailable; an error of the store's own at GetUserInfo is provider-refused with its code", async () => {
    const buyer = await newBuyer(h);
    store.failNext('AuthenticateUserTicket', { status: 500 });
    expectError(await identify(h, buyer, { ticket: ticketFor(buyer.steamId), identity: IDENTITY }), 503, 'unavailable');
    store.failNext('GetUserInfo', { errorcode: 2, errordesc: 'Failed' });
    const refused = expectError(await identify(h, buyer, { ticket: ticketFor(buyer.steamId), identity: IDENTITY }), 502, 'provider-refused');
    expect(refused.details).toEqual({ storeErrorCode: 2 });
    expect(refused.message).not.toContain(STORE_KEY);
  });
});

describe('POST /commerce/orders', () => {
  test('201: the order is made, then InitTxn in the wallet currency with the store item id; storeOrderId is a uint64 string', async () => {
    const buyer = await identifiedBuyer(h, store, { currency: 'EUR' });
    const reply = await order(h, buyer, { sku: 'starter-pack', provider: 'steam', language: 'de' });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ sku: 'starter-pack', provider: 'steam', status: 'awaiting-player', currency: 'EUR', amount: 449 });
    const { storeOrderId } = reply.body;
    expect(storeOrderId).toMatch(/^[1-9][0-9]{0,19}$/);
    expect(BigInt(storeOrderId)).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
    expect(BigInt(storeOrderId)).toBeLessThan(2n ** 64n);
    const init = store.calls.filter((c) => c.method === 'InitTxn').at(-1)!;
    expect(init.params).toMatchObject({
      orderid: storeOrderId,
      steamid: buyer.steamId,
      appid: String(APP_ID),
      itemcount: '1',
      language: 'de',
      currency: 'EUR',
      'itemid[0]': '4294967295',
      'qty[0]': '1',
      'amount[0]': '449',
      'description[0]': 'Starter pack',
    });
    expect(await h.db('commerce_orders').where({ store_order_id: storeOrderId }).first()).toMatchObject({ player_id: buyer.id, status: 'awaiting-player' });
  });

  test('no-steam-account before identify, and the store is not asked', async () => {
    const buyer = await newBuyer(h);
    const before = store.count('InitTxn');
    expectError(await order(h, buyer), 409, 'no-steam-account');
    expect(store.count('InitTxn')).toBe(before);
    expect(await h.db('commerce_orders').where({ player_id: buyer.id })).toEqual([]);
  });

  test('purchase-not-allowed for a wallet the store locked from purchasing, before any InitTxn', async () => {
    const buyer = await identifiedBuyer(h, store, { status: 'Locked from purchasing' });
    const before = store.count('InitTxn');
    expectError(await order(h, buyer), 403, 'purchase-not-allowed');
    expect(store.count('InitTxn')).toBe(before);
  });

  test('purchase-not-allowed when the store refuses InitTxn with its not-allowed code; the order is failed', async () => {
    const buyer = await identifiedBuyer(h, store);
    store.failNext('InitTxn', { errorcode: 103, errordesc: 'User is not allowed to purchase' });
    expectError(await order(h, buyer), 403, 'purchase-not-allowed');
    expect((await h.db('commerce_orders').where({ player_id: buyer.id }).first()).status).toBe('failed');
  });

  test("provider-refused with the store's code for another InitTxn error; the order is failed and another may be made", async () => {
    const buyer = await identifiedBuyer(h, store);
    store.failNext('InitTxn', { errorcode: 2, errordesc: 'Failed' });
    expect(expectError(await order(h, buyer), 502, 'provider-refused').details).toEqual({ storeErrorCode: 2 });
    expect((await h.db('commerce_orders').where({ player_id: buyer.id }).first()).status).toBe('failed');
    expect((await order(h, buyer)).status).toBe(201);
  });

  test('order-in-progress while an order for the product waits; another product may be ordered', async () => {
    const buyer = await identifiedBuyer(h, store);
    expect((await order(h, buyer)).status).toBe(201);
    expectError(await order(h, buyer), 409, 'order-in-progress');
    expect((await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' })).status).toBe(201);
  });

  test('already-active for a one-time product held; a repeatable product is sold again', async () => {
    const buyer = await identifiedBuyer(h, store);
    const first = await order(h, buyer);
    store.authorize(first.body.storeOrderId, true);
    expect((await authorize(h, buyer, first.body.storeOrderId)).body.order.status).toBe('completed');
    expectError(await order(h, buyer), 409, 'already-active');
    for (let i = 0; i < 2; i++) {
      const gems = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
      store.authorize(gems.body.storeOrderId, true);
      expect((await authorize(h, buyer, gems.body.storeOrderId)).body.order.status).toBe('completed');
    }
  });

  test("not-found for an unknown, switched-off or other environment's sku; not-purchasable without a price in the wallet currency", async () => {
    const buyer = await identifiedBuyer(h, store, { currency: 'EUR' });
    for (const sku of ['nope', 'retired', 'test-only']) {
      expect(expectError(await order(h, buyer, { sku, provider: 'steam', language: 'en' }), 404, 'not-found', 'body.sku').message).toBe(
        `No product "${sku}" is on sale.`,
      );
    }
    expectError(await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }), 409, 'not-purchasable');
  });

  test.each([
    ['a missing sku', { provider: 'steam', language: 'en' }, 'body.sku'],
    ['another provider', { sku: 'starter-pack', provider: 'other', language: 'en' }, 'body.provider'],
    ['a language that is no language code', { sku: 'starter-pack', provider: 'steam', language: 'english!' }, 'body.language'],
  ])('%s is invalid-request', async (_name, body, field) => {
    const buyer = await identifiedBuyer(h, store);
    expectError(await order(h, buyer, body), 400, 'invalid-request', field);
  });

  test('a retry under the same Idempotency-Key answers the same order and makes no second; another body under it is idempotency-conflict', async () => {
    const buyer = await identifiedBuyer(h, store);
    const headers = { 'Idempotency-Key': `order-${buyer.id}` };
    const first = await order(h, buyer, undefined, headers);
    const again = await order(h, buyer, undefined, headers);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await h.db('commerce_orders').where({ player_id: buyer.id })).toHaveLength(1);
    expectError(await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }, headers), 409, 'idempotency-conflict');
  });
});

describe('POST /commerce/store/authorizations', () => {
  test('a hint only: an order the store still has in Init stays awaiting-player whatever the hint says', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    const reply = await authorize(h, buyer, made.body.storeOrderId, true);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ order: { ...made.body, updatedAt: expect.any(String) }, entitlements: [] });
    expect(store.txnOf(made.body.storeOrderId).finalized).toBe(0);
  });

  test('approved at the store: finalized once, completed, one entitlement; asking again changes nothing', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, true);
    const reply = await authorize(h, buyer, made.body.storeOrderId, false); // the hint is not believed either way
    expect(reply.body.order.status).toBe('completed');
    expect(reply.body.entitlements).toEqual([
      { id: expect.any(String), key: 'starter', sku: 'starter-pack', orderId: made.body.id, status: 'active', grantedAt: expect.any(String), revokedAt: null },
    ]);
    const again = await authorize(h, buyer, made.body.storeOrderId);
    expect(again.body).toEqual(reply.body);
    expect(store.txnOf(made.body.storeOrderId)).toMatchObject({ status: 'Succeeded', finalized: 1 });
    const catalog = await call(h.base, 'GET', '/commerce/catalog?provider=steam', { token: buyer.token });
    expect(catalog.body.products.find((p: { sku: string }) => p.sku === 'starter-pack').active).toBe(true);
  });

  test('denied in the overlay: failed, nothing granted, and the product may be ordered again', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, false);
    const reply = await authorize(h, buyer, made.body.storeOrderId, false);
    expect(reply.body).toMatchObject({ order: { status: 'failed' }, entitlements: [] });
    expect((await order(h, buyer)).status).toBe(201);
  });

  test('"already committed" at FinalizeTxn is asked again and Succeeded accepted: granted once', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, true);
    // Someone finalized it between our QueryTxn and our FinalizeTxn.
    store.onNext('FinalizeTxn', () => {
      store.txnOf(made.body.storeOrderId).status = 'Succeeded';
    });
    const reply = await authorize(h, buyer, made.body.storeOrderId);
    expect(reply.body.order.status).toBe('completed');
    expect(reply.body.entitlements).toHaveLength(1);
  });

  test('an order the store already settled (Succeeded) is completed without another FinalizeTxn', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.txnOf(made.body.storeOrderId).status = 'Succeeded';
    const before = store.count('FinalizeTxn');
    expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
    expect(store.count('FinalizeTxn')).toBe(before);
  });

  test("not-found for another player's order and for an unknown one; invalid-request past 2^64", async () => {
    const buyer = await identifiedBuyer(h, store);
    const other = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    expectError(await authorize(h, other, made.body.storeOrderId), 404, 'not-found');
    expect(expectError(await authorize(h, buyer, '12345'), 404, 'not-found', 'body.storeOrderId').message).toBe(
      'No order of this player has storeOrderId "12345".',
    );
    expectError(await authorize(h, buyer, '18446744073709551616'), 400, 'invalid-request', 'body.storeOrderId');
    expectError(
      await call(h.base, 'POST', '/commerce/store/authorizations', { token: buyer.token, body: { storeOrderId: 12345, authorized: true } }),
      400,
      'invalid-request',
      'body.storeOrderId',
    );
  });

  test("a QueryTxn error of the store's own is provider-refused; the order stays open for a later try", async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, true);
    store.failNext('QueryTxn', { errorcode: 2, errordesc: 'Failed' });
    expect(expectError(await authorize(h, buyer, made.body.storeOrderId), 502, 'provider-refused').details).toEqual({ storeErrorCode: 2 });
    expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
  });
});

describe('POST /commerce/orders/reconcile', () => {
  test("settles the player's open orders whose client never came back, and answers them with what they gave", async () => {
    const buyer = await identifiedBuyer(h, store);
    const starter = await order(h, buyer);
    const gems = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
    store.authorize(starter.body.storeOrderId, true);
    const reply = await reconcile(h, buyer);
    expect(reply.status).toBe(200);
    const byId = Object.fromEntries(reply.body.orders.map((o: { id: string; status: string }) => [o.id, o.status]));
    expect(byId).toEqual({ [starter.body.id]: 'completed', [gems.body.id]: 'awaiting-player' });
    expect(reply.body.entitlements.map((e: { orderId: string }) => e.orderId)).toEqual([starter.body.id]);
    // Settled orders are no longer open: the next reconciliation has the gems order only.
    expect((await reconcile(h, buyer)).body.orders.map((o: { id: string }) => o.id)).toEqual([gems.body.id]);
  });

  test('nothing open: empty lists', async () => {
    const buyer = await identifiedBuyer(h, store);
    expect((await reconcile(h, buyer)).body).toEqual({ orders: [], entitlements: [] });
  });

  test('an order whose InitTxn is still on its way stays pending and is answered as it stands, not refused', async () => {
    const buyer = await identifiedBuyer(h, store);
    store.delayNext('InitTxn', 400); // the store has not yet heard of the order when the client reconciles
    const making = order(h, buyer);
    const orderRow = () => h.db('commerce_orders').where({ player_id: buyer.id }).first();
    await eventually(async () => (await orderRow()) !== undefined, 5_000, 10);
    const row = await orderRow();
    const reconciled = await reconcile(h, buyer);
    expect(reconciled.status).toBe(200);
    expect(reconciled.body).toEqual({ orders: [expect.objectContaining({ id: row.id, status: 'pending' })], entitlements: [] });
    const authorized = await authorize(h, buyer, row.store_order_id);
    expect(authorized.status).toBe(200);
    expect(authorized.body.order).toEqual(expect.objectContaining({ id: row.id, status: 'pending' }));
    // The InitTxn then lands: the order goes on as any other.
    expect((await making).body).toEqual(expect.objectContaining({ id: row.id, status: 'awaiting-player' }));
    store.authorize(row.store_order_id, true);
    expect((await reconcile(h, buyer)).body.orders).toEqual([expect.objectContaining({ id: row.id, status: 'completed' })]);
  });
});

describe('exactly once', () => {
  test('racing retries of one order under one Idempotency-Key make one order and one InitTxn; racing orders without a key make one, the rest order-in-progress', async () => {
    const buyer = await identifiedBuyer(h, store);
    const headers = { 'Idempotency-Key': `race-${buyer.id}` };
    const keyed = await Promise.all(Array.from({ length: 6 }, () => order(h, buyer, undefined, headers)));
    expect(keyed.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(keyed.map((r) => r.body.id)).size).toBe(1);
    expect(store.calls.filter((c) => c.method === 'InitTxn' && c.params.orderid === keyed[0].body.storeOrderId)).toHaveLength(1);

    const other = await identifiedBuyer(h, store);
    const bare = await Promise.all(Array.from({ length: 6 }, () => order(h, other)));
    expect(bare.filter((r) => r.status === 201)).toHaveLength(1);
    for (const reply of bare.filter((r) => r.status !== 201)) expectError(reply, 409, 'order-in-progress');
    expect(await h.db('commerce_orders').where({ player_id: other.id })).toHaveLength(1);
  });

  test('racing authorizations, reconciliations and retries finalize once and grant once', async () => {
    for (let round = 0; round < 3; round++) {
      const buyer = await identifiedBuyer(h, store);
      const made = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
      const id = made.body.storeOrderId as string;
      store.authorize(id, true);
      store.delayNext('FinalizeTxn', 150); // the finalizer is slow: every other caller arrives while it is in flight
      const racers = [...Array.from({ length: 8 }, () => authorize(h, buyer, id)), ...Array.from({ length: 4 }, () => reconcile(h, buyer))];
      const replies = await Promise.all(racers);
      for (const reply of replies) expect(reply.status).toBe(200);
      // Afterwards (a retry of any of them), the order is settled.
      expect((await authorize(h, buyer, id)).body.order.status).toBe('completed');
      expect(store.txnOf(id).finalized).toBe(1);
      expect(store.calls.filter((c) => c.method === 'FinalizeTxn' && c.params.orderid === id)).toHaveLength(1);
      const entitlements = await h.db('commerce_entitlements').where({ order_id: made.body.id });
      expect(entitlements).toHaveLength(1);
      expect(await h.db('commerce_grant_changes').where({ entitlement_id: entitlements[0].id })).toHaveLength(1);
    }
  });
});

describe("the economy's share of a product", () => {
  async function holdings(playerId: string) {
    const ledger = await h
      .db('ledger_entries')
      .where({ player_id: playerId, currency_key: 'gems' })
      .orderBy('id')
      .select('amount', 'balance_after', 'reason', 'reference');
    const badges = await h
      .db('item_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .where({ 'i.player_id': playerId, 's.item_type_key': 'badge' })
      .first('s.quantity');
    return { ledger: ledger.map((e) => ({ ...e, amount: Number(e.amount), balance_after: Number(e.balance_after) })), badges: Number(badges?.quantity ?? 0) };
  }

  test('a completed order credits its currencies and grants its items once, as ledger entries naming the order, under racing settlements', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer, { sku: 'gem-bundle', provider: 'steam', language: 'en' });
    store.authorize(made.body.storeOrderId, true);
    store.delayNext('FinalizeTxn', 100);
    await Promise.all([...Array.from({ length: 5 }, () => authorize(h, buyer, made.body.storeOrderId)), reconcile(h, buyer), reconcile(h, buyer)]);
    expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
    expect(await holdings(buyer.id)).toEqual({ ledger: [{ amount: 100, balance_after: 100, reason: 'commerce', reference: made.body.id }], badges: 1 });
  });

  test("an economy refusal (past the currency's cap) grants nothing and leaves the order open; the next settlement after the cap allows it grants once", async () => {
    const buyer = await identifiedBuyer(h, store);
    for (let i = 0; i < 2; i++) {
      const made = await order(h, buyer, { sku: 'gem-bundle', provider: 'steam', language: 'en' });
      store.authorize(made.body.storeOrderId, true);
      expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
    }
    const third = await order(h, buyer, { sku: 'gem-bundle', provider: 'steam', language: 'en' });
    store.authorize(third.body.storeOrderId, true);
    expectError(await authorize(h, buyer, third.body.storeOrderId), 409, 'balance-cap');
    expect(store.txnOf(third.body.storeOrderId)).toMatchObject({ status: 'Succeeded', finalized: 1 }); // the money was taken: the grant stays due
    expect((await h.db('commerce_orders').where({ id: third.body.id }).first()).status).toBe('awaiting-player');
    expect(await h.db('commerce_entitlements').where({ order_id: third.body.id })).toEqual([]);
    expect((await holdings(buyer.id)).badges).toBe(2);
    // Spend some gems: the next settlement completes the order and credits once.
    const spent = await call(h.base, 'POST', `/players/${buyer.id}/currencies/gems/debit`, {
      token: h.serverKeys['shop-live-key'],
      body: { amount: 150, reason: 'spent' },
      headers: { 'Idempotency-Key': `spend-${buyer.id}` },
    });
    expect(spent.status).toBe(200);
    const settled = await reconcile(h, buyer);
    expect(settled.body.orders).toEqual([expect.objectContaining({ id: third.body.id, status: 'completed' })]);
    expect(store.txnOf(third.body.storeOrderId).finalized).toBe(1);
    const { ledger, badges } = await holdings(buyer.id);
    expect(ledger.filter((e) => e.reference === third.body.id)).toEqual([{ amount: 100, balance_after: 150, reason: 'commerce', reference: third.body.id }]);
    expect(badges).toBe(3);
  });
});

describe('GET /players/:playerId/entitlements', () => {
  test("the player as `me`, a server key of its environment by id, in pages; the player naming an id is forbidden; another environment's key is not-found", async () => {
    const buyer = await identifiedBuyer(h, store);
    for (let i = 0; i < 3; i++) {
      const gems = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
      store.authorize(gems.body.storeOrderId, true);
      await authorize(h, buyer, gems.body.storeOrderId);
    }
    const mine = await call(h.base, 'GET', '/players/me/entitlements?limit=2', { token: buyer.token });
    expect(mine.status).toBe(200);
    expect(mine.body.items).toHaveLength(2);
    expect(mine.body.next).toEqual(expect.any(String));
    const rest = await call(h.base, 'GET', `/players/me/entitlements?limit=2&cursor=${encodeURIComponent(mine.body.next)}`, { token: buyer.token });
    expect(rest.body).toEqual({ items: [expect.objectContaining({ key: 'gems-100', status: 'active' })], next: null });
    const byServer = await call(h.base, 'GET', `/players/${buyer.id}/entitlements`, { token: h.serverKeys['shop-live-key'] });
    expect(byServer.body.items.map((e: { id: string }) => e.id)).toEqual([...mine.body.items, ...rest.body.items].map((e: { id: string }) => e.id));
    expectError(await call(h.base, 'GET', `/players/${buyer.id}/entitlements`, { token: buyer.token }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `/players/${buyer.id}/entitlements`, { token: h.serverKeys['shop-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/players/me/entitlements?cursor=forged', { token: buyer.token }), 400, 'invalid-request', 'query.cursor');
  });
});

describe('Product documents and store settings', () => {
  test('a second document claiming a sku of the environment is refused, and applies nothing', async () => {
    await expect(
      h.apply([
        product('starter-copy', {
          environment: 'shop-live',
          sku: 'starter-pack',
          name: 'Copy',
          storeItemId: 9,
          entitlement: 'x',
          prices: [{ currency: 'USD', amount: 1 }],
        }),
      ]),
    ).rejects.toThrow(/starter-pack/);
    expect(await h.db('commerce_products').where({ owner: 'tests/starter-copy' })).toEqual([]);
  });

  test('a prices list naming a currency twice, or a storeItemId past uint32, is refused by the schema', async () => {
    const base = { environment: 'shop-live', sku: 'bad', name: 'Bad', entitlement: 'bad' };
    await expect(
      h.apply([
        product('bad-1', {
          ...base,
          storeItemId: 1,
          prices: [
            { currency: 'USD', amount: 1 },
            { currency: 'USD', amount: 2 },
          ],
        }),
      ]),
    ).rejects.toThrow();
    await expect(h.apply([product('bad-2', { ...base, storeItemId: 4294967296, prices: [{ currency: 'USD', amount: 1 }] })])).rejects.toThrow();
    expect(await h.db('commerce_products').where({ sku: 'bad' })).toEqual([]);
  });

  test('a sandbox project sends its microtransactions to the sandbox interface', async () => {
    await h.apply([
      project('sandy', { store: { ...storeSettings(store), sandbox: true } }),
      environment('sandy-live', 'sandy'),
      serverKey('sandy-live-key', 'sandy-live'),
      product('sandy-product', {
        environment: 'sandy-live',
        sku: 'thing',
        name: 'Thing',
        storeItemId: 7,
        entitlement: 'thing',
        prices: [{ currency: 'USD', amount: 5 }],
      }),
    ]);
    const buyer = await identifiedBuyer(h, store, {}, 'sandy-live-key');
    const made = await order(h, buyer, { sku: 'thing', provider: 'steam', language: 'en' });
    expect(made.status).toBe(201);
    store.authorize(made.body.storeOrderId, true);
    expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
    const calls = store.calls.filter((c) => c.params.orderid === made.body.storeOrderId || (c.method === 'GetUserInfo' && c.params.steamid === buyer.steamId));
    expect(new Set(calls.map((c) => c.interface))).toEqual(new Set(['ISteamMicroTxnSandbox']));
    expect(store.txnOf(made.body.storeOrderId).sandbox).toBe(true);
  });
});

describe('grants for servers', () => {
  let key: string;
  const buyers: Awaited<ReturnType<typeof identifiedBuyer>>[] = [];

  /** A completed order of the feed environment's product by `buyer`: its order id. */
  async function bought(buyer: (typeof buyers)[number]): Promise<string> {
    const made = await order(h, buyer, { sku: 'feed-thing', provider: 'steam', language: 'en' });
    store.authorize(made.body.storeOrderId, true);
    expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
    return made.body.id as string;
  }

  beforeAll(async () => {
    await h.apply([
      project('feed', { store: storeSettings(store) }),
      environment('feed-live', 'feed'),
      serverKey('feed-live-key', 'feed-live'),
      product('feed-thing', {
        environment: 'feed-live',
        sku: 'feed-thing',
        name: 'Thing',
        storeItemId: 8,
        entitlement: 'feed-thing',
        repeatable: true,
        prices: [{ currency: 'USD', amount: 5 }],
      }),
    ]);
    key = h.serverKeys['feed-live-key'];
    buyers.push(await identifiedBuyer(h, store, {}, 'feed-live-key'), await identifiedBuyer(h, store, {}, 'feed-live-key'));
  });

  test('the changes feed: granted changes in commit order, paged; next is never null, and an empty page keeps its place', async () => {
    const start = await call(h.base, 'GET', '/commerce/grants/changes', { token: key });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ items: [], next: expect.any(String) });
    const orders = [await bought(buyers[0]), await bought(buyers[1]), await bought(buyers[0])];
    const first = await call(h.base, 'GET', `/commerce/grants/changes?limit=2&cursor=${encodeURIComponent(start.body.next)}`, { token: key });
    expect(first.body.items.map((c: { change: string; grant: { orderId: string } }) => [c.change, c.grant.orderId])).toEqual([
      ['granted', orders[0]],
      ['granted', orders[1]],
    ]);
    expect(first.body.items[0].grant).toMatchObject({ playerId: buyers[0].id, key: 'feed-thing', sku: 'feed-thing', status: 'active', acknowledgedAt: null });
    const second = await call(h.base, 'GET', `/commerce/grants/changes?limit=2&cursor=${encodeURIComponent(first.body.next)}`, { token: key });
    expect(second.body.items.map((c: { grant: { orderId: string } }) => c.grant.orderId)).toEqual([orders[2]]);
    const empty = await call(h.base, 'GET', `/commerce/grants/changes?cursor=${encodeURIComponent(second.body.next)}`, { token: key });
    expect(empty.body.items).toEqual([]);
    expect(typeof empty.body.next).toBe('string');
    const later = await bought(buyers[1]);
    const caughtUp = await call(h.base, 'GET', `/commerce/grants/changes?cursor=${encodeURIComponent(empty.body.next)}`, { token: key });
    expect(caughtUp.body.items.map((c: { grant: { orderId: string } }) => c.grant.orderId)).toEqual([later]);
    // Another environment's feed has none of them.
    const other = await call(h.base, 'GET', '/commerce/grants/changes', { token: h.serverKeys['shop-test-key'] });
    expect(other.body.items.filter((c: { grant: { orderId: string } }) => [...orders, later].includes(c.grant.orderId))).toEqual([]);
    expectError(
      await call(h.base, 'GET', `/commerce/grants/changes?cursor=${encodeURIComponent(empty.body.next)}`, { token: h.serverKeys['shop-test-key'] }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test("unacknowledged grants; acknowledging takes one out once; another environment's grant is not-found; a player token is forbidden", async () => {
    const listed = await call(h.base, 'GET', '/commerce/grants', { token: key });
    expect(listed.status).toBe(200);
    expect(listed.body.items.length).toBeGreaterThanOrEqual(4);
    const grant = listed.body.items[0];
    const acked = await call(h.base, 'POST', `/commerce/grants/${grant.id}/ack`, { token: key });
    expect(acked.status).toBe(200);
    expect(acked.body).toEqual({ ...grant, acknowledgedAt: expect.any(String) });
    const again = await call(h.base, 'POST', `/commerce/grants/${grant.id}/ack`, { token: key });
    expect(again.body).toEqual(acked.body);
    const after = await call(h.base, 'GET', '/commerce/grants', { token: key });
    expect(after.body.items.map((g: { id: string }) => g.id)).toEqual(listed.body.items.slice(1).map((g: { id: string }) => g.id));
    expectError(await call(h.base, 'POST', `/commerce/grants/${after.body.items[0].id}/ack`, { token: h.serverKeys['shop-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'POST', '/commerce/grants/no-such-grant/ack', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/commerce/grants', { token: buyers[0].token }), 403, 'forbidden');
    expectError(await call(h.base, 'POST', `/commerce/grants/${after.body.items[0].id}/ack`, { token: buyers[0].token }), 403, 'forbidden');
  });
});

describe('deleting a player', () => {
  test('takes their store account, identify attempts, orders and entitlements with them', async () => {
    const buyer = await identifiedBuyer(h, store);
    const done = await order(h, buyer);
    store.authorize(done.body.storeOrderId, true);
    await authorize(h, buyer, done.body.storeOrderId);
    await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
    const deleted = await call(h.base, 'DELETE', `/players/${buyer.id}`, { token: h.serverKeys['shop-live-key'] });
    expect(deleted.status).toBe(204);
    for (const table of ['commerce_store_accounts', 'commerce_identify_attempts', 'commerce_orders', 'commerce_entitlements']) {
      expect({ table, rows: await h.db(table).where({ player_id: buyer.id }) }).toEqual({ table, rows: [] });
    }
  });
});

describe('isolation between environments', () => {
  test("a shop-test player's store account, orders and entitlements are its own; shop-live's orders are not found from there", async () => {
    const live = await identifiedBuyer(h, store);
    const tester = await identifiedBuyer(h, store, {}, 'shop-test-key');
    const made = await order(h, live);
    expectError(await authorize(h, tester, made.body.storeOrderId), 404, 'not-found');
    const testOrder = await order(h, tester, { sku: 'test-only', provider: 'steam', language: 'en' });
    expect(testOrder.status).toBe(201);
    expect((await reconcile(h, tester)).body.orders.map((o: { id: string }) => o.id)).toEqual([testOrder.body.id]);
  });
});
