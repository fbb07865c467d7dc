/**
 * The commerce report job (docs/commerce.md "Background reconciliation", "Refunds and chargebacks")
 * against the stand-in store: abandoned orders settled through the routes' exactly-once path, stale
 * ones expired, one runner per project, a cursor that survives a restart, refunds and chargebacks
 * revoking the entitlement, feeding the grants' changes and taking currencies back through the money
 * engine, each applied once; the metrics it moves; projects kept apart. Also the reconcile route when
 * the store answers some of a player's orders only.
 */
import { Writable } from 'node:stream';
import { Client } from 'pg';
import pino from 'pino';
import { createLogger } from '@hearth/core';
import { GRANT_FEED_LOCK, storeReportJob, type StoreReportSettings } from '@hearth/core/commerce';
import { loadEnvironmentById } from '@hearth/core/tenancy';
import { removeManifest } from '@hearth/core/manifests';
import { runEngineMove } from '@hearth/core/economy';
import { CrashWorkerMetrics, loadStoreReportSettings } from '@hearth/crash-worker';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { StoreStandIn } from '../support/store-standin';
import { TestClock } from '../support/clock';
import { eventually } from '../support/wait';
import { NAMESPACE, currency, environment, itemType, project, serverKey } from '../support/manifests';
import { STORE_KEY, STORE_KEY_VARIABLE, authorize, commerceManifests, identifiedBuyer, order, product, reconcile, storeSettings, type Buyer } from './helpers';

let h: Harness;
let store: StoreStandIn;
let metrics: CrashWorkerMetrics;

const SETTINGS: StoreReportSettings = { intervalSeconds: 3600, maxResults: 500, openOrdersPerTick: 50, recheckSeconds: 0, abandonedAfterSeconds: 3600 };

function newJob(settings: Partial<StoreReportSettings> = {}, clock?: TestClock) {
  return storeReportJob({
    db: h.db,
    logger: createLogger(process.env.REPORT_LOG ?? 'silent'),
    settings: { ...SETTINGS, ...settings },
    commerce: h.core.commerce,
    observer: metrics.storeReport,
    clock,
  });
}

beforeAll(async () => {
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  h = await startHarness({
    manifests: [
      ...commerceManifests(store),
      // Another project selling under the same app id: the report names both projects' orders.
      project('shop2', { store: storeSettings(store) }),
      environment('shop2-live', 'shop2'),
      serverKey('shop2-live-key', 'shop2-live'),
      product('shop2-gems', {
        environment: 'shop2-live',
        sku: 'starter-pack',
        name: 'Starter pack',
        storeItemId: 7,
        entitlement: 'starter',
        prices: [{ currency: 'USD', amount: 499 }],
      }),
      // Items held one by one: a take-back consumes the very items the grant made.
      itemType('shop-trophy', { environment: 'shop-live', key: 'trophy', name: 'Trophy', category: 'misc', ownership: 'one-by-one' }),
      product('trophies', {
        environment: 'shop-live',
        sku: 'trophy-pack',
        name: 'Trophies',
        storeItemId: 8,
        entitlement: 'trophy-pack',
        repeatable: true,
        prices: [{ currency: 'USD', amount: 299 }],
        items: [{ itemTypeKey: 'trophy', quantity: 2 }],
      }),
      // What a product gave, switched off, made unusable or removed after the purchase: its refund still settles.
      ...retiredGoods({}),
      product('retired-goods', {
        environment: 'shop-live',
        sku: 'retired-goods',
        name: 'Retired goods',
        storeItemId: 9,
        entitlement: 'retired-goods',
        repeatable: true,
        prices: [{ currency: 'USD', amount: 399 }],
        currencies: [
          { currencyKey: 'tokens', amount: 100 },
          { currencyKey: 'stars', amount: 10 },
        ],
        items: [
          { itemTypeKey: 'potion', quantity: 3 },
          { itemTypeKey: 'medal', quantity: 2 },
          { itemTypeKey: 'relic', quantity: 1 },
        ],
      }),
    ],
  });
  metrics = new CrashWorkerMetrics(h.db, false);
});
afterAll(async () => {
  await h.close();
  await store.stop();
});

/** The currencies and item types of the `retired-goods` product, as they read before (`{}`) or after they were retired. */
function retiredGoods(retired: { enabled?: boolean; usable?: boolean }) {
  const env = 'shop-live';
  return [
    currency('shop-tokens', {
      environment: env,
      key: 'tokens',
      name: 'Tokens',
      scope: 'account',
      kind: 'balance',
      ...(retired.enabled === undefined ? {} : { enabled: retired.enabled }),
    }),
    currency('shop-stars', { environment: env, key: 'stars', name: 'Stars', scope: 'account', kind: 'balance' }),
    itemType('shop-potion', { environment: env, key: 'potion', name: 'Potion', category: 'consumable', ownership: 'counted', usable: true, ...retired }),
    itemType('shop-medal', { environment: env, key: 'medal', name: 'Medal', category: 'misc', ownership: 'one-by-one', usable: true, ...retired }),
    itemType('shop-relic', { environment: env, key: 'relic', name: 'Relic', category: 'misc', ownership: 'counted' }),
  ];
}

/** A completed order of `sku` (approved in the overlay, authorized by the client). */
async function completedOrder(buyer: Buyer, sku = 'starter-pack'): Promise<{ id: string; storeOrderId: string }> {
  const made = await order(h, buyer, { sku, provider: 'steam', language: 'en' });
  expect(made.status).toBe(201);
  store.authorize(made.body.storeOrderId, true);
  const settled = await authorize(h, buyer, made.body.storeOrderId);
  expect(settled.body.order.status).toBe('completed');
  return made.body;
}

async function orderRow(id: string) {
  return h.db('commerce_orders').where({ id }).first();
}

async function entitlementsOf(orderId: string) {
  return h.db('commerce_entitlements').where({ order_id: orderId });
}

async function gemsOf(playerId: string): Promise<number> {
  const row = await h
    .db('balances as b')
    .join('inventories as i', 'i.id', 'b.inventory_id')
    .where({ 'i.player_id': playerId, 'b.currency_key': 'gems' })
    .first('b.amount');
  return Number(row?.amount ?? 0);
}

async function badgesOf(playerId: string): Promise<number> {
  const row = await h
    .db('item_stacks as s')
    .join('inventories as i', 'i.id', 's.inventory_id')
    .where({ 'i.player_id': playerId, 's.item_type_key': 'badge' })
    .first('s.quantity');
  return Number(row?.quantity ?? 0);
}

async function ledgerOf(playerId: string) {
  return (await h.db('ledger_entries').where({ player_id: playerId, currency_key: 'gems' }).orderBy('id')).map((e) => ({
    amount: Number(e.amount),
    balanceAfter: Number(e.balance_after),
    reason: e.reason,
    reference: e.reference,
  }));
}

async function changesOf(orderId: string) {
  return (
    await h.db('commerce_grant_changes as c').join('commerce_entitlements as e', 'e.id', 'c.entitlement_id').where('e.order_id', orderId).orderBy('c.seq')
  ).map((c) => c.change);
}

async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as { labels: Record<string, string | number>; value: number }[];
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)).reduce((sum, v) => sum + v.value, 0);
}

describe('POST /commerce/orders/reconcile when the store answers some orders only', () => {
  test('the orders it answered are settled, the one it could not stays open: 200 with both; the store answering none is the refusal', async () => {
    const buyer = await identifiedBuyer(h, store);
    const starter = await order(h, buyer);
    const gems = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
    store.authorize(starter.body.storeOrderId, true);
    store.authorize(gems.body.storeOrderId, true);
    store.failNext('QueryTxn', { status: 500 }); // the first (oldest) order's QueryTxn
    const reply = await reconcile(h, buyer);
    expect(reply.status).toBe(200);
    expect(Object.fromEntries(reply.body.orders.map((o: { id: string; status: string }) => [o.id, o.status]))).toEqual({
      [starter.body.id]: 'awaiting-player',
      [gems.body.id]: 'completed',
    });
    expect(reply.body.entitlements.map((e: { orderId: string }) => e.orderId)).toEqual([gems.body.id]);
    // The store out of reach for every open order: the refusal, and nothing changed.
    store.failNext('QueryTxn', { status: 500 });
    expectError(await reconcile(h, buyer), 503, 'unavailable');
    expect((await orderRow(starter.body.id)).status).toBe('awaiting-player');
    expect((await reconcile(h, buyer)).body.orders).toEqual([expect.objectContaining({ id: starter.body.id, status: 'completed' })]);
  });
});

describe('settling orders whose client never came back', () => {
  test('an abandoned approved order is finalized once and granted once while an authorization races the job', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, true);
    store.delayNext('FinalizeTxn', 300);
    const [summary, raced] = await Promise.all([newJob().tick(), authorize(h, buyer, made.body.storeOrderId), authorize(h, buyer, made.body.storeOrderId)]);
    expect(summary.projects.every((p) => p.outcome === 'succeeded')).toBe(true);
    expect(raced.status).toBe(200);
    expect(store.txnOf(made.body.storeOrderId).finalized).toBe(1);
    expect(await entitlementsOf(made.body.id)).toHaveLength(1);
    expect((await orderRow(made.body.id)).status).toBe('completed');
    await newJob().tick();
    expect(store.txnOf(made.body.storeOrderId).finalized).toBe(1);
    expect(await entitlementsOf(made.body.id)).toHaveLength(1);
  });

  test('Succeeded is completed, Failed is failed, from the report; an overlay left past the abandoned age and an order the store never heard of are failed', async () => {
    const buyer = await identifiedBuyer(h, store);
    const succeeded = await order(h, buyer);
    store.authorize(succeeded.body.storeOrderId, true);
    store.txnOf(succeeded.body.storeOrderId).status = 'Succeeded'; // finalized by an earlier caller that died before completing
    const declined = await order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' });
    store.authorize(declined.body.storeOrderId, false);
    const other = await identifiedBuyer(h, store);
    const abandoned = await order(h, other);
    store.failNext('InitTxn', { status: 500 });
    const unheard = await order(h, other, { sku: 'gems-100', provider: 'steam', language: 'en' });
    expectError(unheard, 503, 'unavailable');
    const [pending] = await h.db('commerce_orders').where({ player_id: other.id, sku: 'gems-100' });
    expect(pending.status).toBe('pending');
    await h
      .db('commerce_orders')
      .whereIn('id', [abandoned.body.id, pending.id])
      .update({ created_at: h.db.raw("now() - interval '2 hours'") });
    const expiredBefore = await metricValue('hearth_commerce_report_orders_total', { action: 'expired', status: 'failed' });

    await newJob().tick();
    expect((await orderRow(succeeded.body.id)).status).toBe('completed');
    expect(store.txnOf(succeeded.body.storeOrderId).finalized).toBe(0);
    expect(await entitlementsOf(succeeded.body.id)).toHaveLength(1);
    expect((await orderRow(declined.body.id)).status).toBe('failed');
    expect((await orderRow(abandoned.body.id)).status).toBe('failed');
    expect((await orderRow(pending.id)).status).toBe('failed');
    expect(await metricValue('hearth_commerce_report_orders_total', { action: 'expired', status: 'failed' })).toBe(expiredBefore + 2);
    // A fresh overlay is not abandoned: it stays awaiting the player.
    const fresh = await order(h, other);
    await newJob().tick();
    expect((await orderRow(fresh.body.id)).status).toBe('awaiting-player');
  });
});

describe('one runner at a time', () => {
  test('two runners ticking at once: one works the project, the other skips it and asks the store nothing', async () => {
    store.delayNext('GetReport', 400);
    const before = store.count('GetReport');
    const skippedBefore = await metricValue('hearth_commerce_report_runs_total', { outcome: 'skipped' });
    const [a, b] = await Promise.all([newJob().tick(), newJob().tick()]);
    const outcomes = [...a.projects, ...b.projects]
      .filter((p) => p.projectId === a.projects[0]!.projectId)
      .map((p) => p.outcome)
      .sort();
    expect(outcomes).toEqual(['skipped', 'succeeded']);
    // Only the runs that held their project read the report.
    const ran = [...a.projects, ...b.projects].filter((p) => p.outcome === 'succeeded').length;
    expect(store.count('GetReport') - before).toBe(ran);
    expect(await metricValue('hearth_commerce_report_runs_total', { outcome: 'skipped' })).toBe(
      skippedBefore + [...a.projects, ...b.projects].filter((p) => p.outcome === 'skipped').length,
    );
    // The lock is released: the next tick works every project.
    expect((await newJob().tick()).projects.map((p) => p.outcome)).toEqual(['succeeded', 'succeeded']);
  });

  test('a runner that dies mid-run frees its project at once: the lock ends with its connection', async () => {
    const [shop] = await h.db('projects').where({ name: 'shop' }).select('id');
    // Another runner's connection holding the project's lock (the job's lock class, 'rept').
    const other = new Client({ connectionString: h.database.url });
    other.on('error', () => undefined); // the termination below is expected
    await other.connect();
    await other.query('SELECT pg_advisory_lock($1, $2::int)', [0x72657074, shop.id]);
    const held = await newJob().tick();
    expect(held.projects.find((p) => p.projectId === Number(shop.id))!.outcome).toBe('skipped');
    // Its process is killed: the server ends the session, and the lock with it.
    await h.db.raw('SELECT pg_terminate_backend(?)', [(await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid]);
    await other.end().catch(() => undefined);
    const freed = await newJob().tick();
    expect(freed.projects.find((p) => p.projectId === Number(shop.id))!.outcome).toBe('succeeded');
  });
});

describe('refunds and chargebacks', () => {
  test('a refund revokes, adds the revoked change, takes the currency back through the ledger; seen twice, nothing changes', async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    expect(await gemsOf(buyer.id)).toBe(100);
    store.settle(bundle.storeOrderId, 'Refunded');
    await newJob().tick();

    const row = await orderRow(bundle.id);
    expect(row.status).toBe('refunded');
    const [entitlement] = await entitlementsOf(bundle.id);
    expect({ status: entitlement.status, revoked: entitlement.revoked_at instanceof Date }).toEqual({ status: 'revoked', revoked: true });
    expect(await changesOf(bundle.id)).toEqual(['granted', 'revoked']);
    expect(await gemsOf(buyer.id)).toBe(0);
    expect(await ledgerOf(buyer.id)).toEqual([
      { amount: 100, balanceAfter: 100, reason: 'commerce', reference: bundle.id },
      { amount: -100, balanceAfter: 0, reason: 'commerce-refund', reference: bundle.id },
    ]);
    // The badge the product gave is taken back from its stack; nothing was short.
    expect(await badgesOf(buyer.id)).toBe(0);
    expect(await h.db('commerce_take_back_shortfalls').where({ order_id: bundle.id })).toEqual([]);
    // The server's feed and the player's list say it.
    const feed = await call(h.base, 'GET', '/commerce/grants/changes?limit=100', { token: h.serverKeys['shop-live-key'] });
    expect(
      feed.body.items
        .filter((c: { grant: { orderId: string } }) => c.grant.orderId === bundle.id)
        .map((c: { change: string; grant: { status: string } }) => [c.change, c.grant.status]),
    ).toEqual([
      ['granted', 'revoked'],
      ['revoked', 'revoked'],
    ]);

    // Seen again (the report is read from the last order's time inclusive, and a new job starts over from the cursor).
    await newJob().tick();
    await newJob().tick();
    expect(await changesOf(bundle.id)).toEqual(['granted', 'revoked']);
    expect(await ledgerOf(buyer.id)).toHaveLength(2);
    expect(await badgesOf(buyer.id)).toBe(0);
    expect(await h.db('commerce_take_back_shortfalls').where({ order_id: bundle.id })).toEqual([]);
  });

  test("the take-back reads what the order recorded: a credit the ledger files under the order's reason and id is not taken back", async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    expect(await h.db('commerce_order_currency_grants').where({ order_id: bundle.id }).select('currency_key', 'amount')).toEqual([
      { currency_key: 'gems', amount: '100' },
    ]);
    // A game server's credit of 50 gems filed as reason `commerce` with the order's id, as one could before the
    // engine's reasons were reserved (the routes refuse it now: test/economy/economy.test.ts), made here under the routes.
    const row = await orderRow(bundle.id);
    const env = (await loadEnvironmentById(h.db, Number(row.environment_id)))!;
    await runEngineMove(h.db, env, buyer.id, 'credit', { currencyKey: 'gems', amount: 50, reason: 'commerce', reference: bundle.id });
    expect(await gemsOf(buyer.id)).toBe(150);
    store.settle(bundle.storeOrderId, 'Refunded');
    await newJob().tick();
    expect((await orderRow(bundle.id)).status).toBe('refunded');
    // Only the order's own 100 are taken back; the 50 stay the player's.
    expect(await gemsOf(buyer.id)).toBe(50);
    expect(await ledgerOf(buyer.id)).toEqual([
      { amount: 100, balanceAfter: 100, reason: 'commerce', reference: bundle.id },
      { amount: 50, balanceAfter: 150, reason: 'commerce', reference: bundle.id },
      { amount: -100, balanceAfter: 50, reason: 'commerce-refund', reference: bundle.id },
    ]);
    expect(await h.db('commerce_take_back_shortfalls').where({ order_id: bundle.id })).toEqual([]);
  });

  test('an order the previous release completed (no record of its currencies) is taken back from the ledger, as that release did', async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    // What the previous release's grant leaves during a rolling upgrade: the credit in the ledger, no record.
    await h.db('commerce_order_currency_grants').where({ order_id: bundle.id }).delete();
    await h.db('commerce_orders').where({ id: bundle.id }).update({ currency_grants_recorded: false });
    store.settle(bundle.storeOrderId, 'Refunded');
    await newJob().tick();
    expect((await orderRow(bundle.id)).status).toBe('refunded');
    expect(await gemsOf(buyer.id)).toBe(0);
    expect((await ledgerOf(buyer.id)).map((e) => [e.amount, e.reason])).toEqual([
      [100, 'commerce'],
      [-100, 'commerce-refund'],
    ]);
  });

  test('a refund the report names while a racing authorization completes the order is taken back in that same tick', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer, { sku: 'gem-bundle', provider: 'steam', language: 'en' });
    const id = made.body.storeOrderId as string;
    // The store took the money (its FinalizeTxn answered) and Hearth has not completed the order yet.
    store.authorize(id, true);
    Object.assign(store.txnOf(id), { status: 'Succeeded', finalized: 1 });
    const waiting = async (n: number) => {
      const count = async () =>
        Number(
          (
            await h.db.raw(
              'SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()',
            )
          ).rows[0].n,
        );
      await eventually(async () => (await count()) >= n, 10_000, 10);
    };
    // The authorization's completion is held at the feed lock, holding the order's row lock by then...
    const feedLock = await h.db.transaction();
    await feedLock.raw('SELECT pg_advisory_xact_lock(?, ?)', [GRANT_FEED_LOCK, (await orderRow(made.body.id)).environment_id]);
    const completing = authorize(h, buyer, id);
    await waiting(1);
    // ...when the store refunds it and the job reads the refund of an order it finds still open.
    store.settle(id, 'Refunded');
    const ticking = newJob().tick();
    await waiting(2);
    await feedLock.commit();
    expect((await completing).body.order.status).toBe('completed');
    await ticking;
    expect((await orderRow(made.body.id)).status).toBe('refunded');
    expect(await changesOf(made.body.id)).toEqual(['granted', 'revoked']);
    expect(await ledgerOf(buyer.id)).toEqual([
      { amount: 100, balanceAfter: 100, reason: 'commerce', reference: made.body.id },
      { amount: -100, balanceAfter: 0, reason: 'commerce-refund', reference: made.body.id },
    ]);
  });

  test('a chargeback after the player spent part: takes what is there, never below zero, and records the shortfall', async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    const spent = await call(h.base, 'POST', `/players/${buyer.id}/currencies/gems/debit`, {
      token: h.serverKeys['shop-live-key'],
      body: { amount: 30, reason: 'shop' },
      headers: { 'Idempotency-Key': `spend-${buyer.id}` },
    });
    expect(spent.status).toBe(200);
    store.settle(bundle.storeOrderId, 'Chargedback');
    const revokedBefore = await metricValue('hearth_commerce_report_orders_total', { action: 'revoked', status: 'chargedback' });
    await newJob().tick();
    expect((await orderRow(bundle.id)).status).toBe('chargedback');
    expect(await gemsOf(buyer.id)).toBe(0);
    expect((await ledgerOf(buyer.id)).map((e) => [e.amount, e.balanceAfter, e.reason])).toEqual([
      [100, 100, 'commerce'],
      [-30, 70, 'shop'],
      [-70, 0, 'commerce-chargeback'],
    ]);
    const shortfalls = await h.db('commerce_take_back_shortfalls').where({ order_id: bundle.id }).whereNotNull('currency_key');
    expect(shortfalls.map((s) => ({ currency: s.currency_key, owed: Number(s.owed), taken: Number(s.taken), reason: s.reason }))).toEqual([
      { currency: 'gems', owed: 100, taken: 70, reason: 'commerce-chargeback' },
    ]);
    expect(await metricValue('hearth_commerce_report_orders_total', { action: 'revoked', status: 'chargedback' })).toBe(revokedBefore + 1);
    await newJob().tick();
    expect(await ledgerOf(buyer.id)).toHaveLength(3);
  });

  test("items held one by one: the grant's own items are consumed; one the player already used is a shortfall", async () => {
    const buyer = await identifiedBuyer(h, store);
    const pack = await completedOrder(buyer, 'trophy-pack');
    const trophies = await h.db('items').where({ player_id: buyer.id, item_type_key: 'trophy' }).orderBy('seq');
    expect(trophies.map((t) => t.consumed_at)).toEqual([null, null]);
    const used = await call(h.base, 'POST', `/players/${buyer.id}/items/${trophies[0].id}/consume`, {
      token: h.serverKeys['shop-live-key'],
      headers: { 'Idempotency-Key': `use-${buyer.id}` },
    });
    expect(used.status).toBe(200);
    store.settle(pack.storeOrderId, 'RefundedFriendlyFraud');
    await newJob().tick();
    expect((await orderRow(pack.id)).status).toBe('refunded');
    const after = await h.db('items').where({ player_id: buyer.id, item_type_key: 'trophy' }).orderBy('seq');
    expect(after.every((t) => t.consumed_at instanceof Date)).toBe(true);
    expect(new Date(after[0].consumed_at).getTime()).toBe(new Date((await h.db('items').where({ id: trophies[0].id }).first()).consumed_at).getTime());
    const shortfalls = await h.db('commerce_take_back_shortfalls').where({ order_id: pack.id });
    expect(shortfalls.map((s) => ({ item: s.item_type_key, owed: Number(s.owed), taken: Number(s.taken), reason: s.reason }))).toEqual([
      { item: 'trophy', owed: 2, taken: 1, reason: 'commerce-refund' },
    ]);
    await newJob().tick();
    expect(await h.db('commerce_take_back_shortfalls').where({ order_id: pack.id })).toHaveLength(1);
  });

  test("what the order gave is taken back after its currency and item types were switched off, made unusable or removed; the ledger rows are a debit's", async () => {
    const buyer = await identifiedBuyer(h, store);
    const goods = await completedOrder(buyer, 'retired-goods');
    const token = h.serverKeys['shop-live-key'];
    const serverCall = (path: string, body: Record<string, unknown>, key: string) =>
      call(h.base, 'POST', `/players/${buyer.id}${path}`, { token, body, headers: { 'Idempotency-Key': `${key}-${buyer.id}` } });
    // The player spends a little of each before the refund: a debit move, a stack consumed, an item consumed.
    expect((await serverCall('/currencies/tokens/debit', { amount: 10, reason: 'shop', reference: 'sword' }, 'spend')).status).toBe(200);
    expect((await serverCall('/item-stacks/consume', { itemTypeKey: 'potion', quantity: 1 }, 'drink')).status).toBe(200);
    const [usedMedal] = await h.db('items').where({ player_id: buyer.id, item_type_key: 'medal' }).orderBy('seq');
    expect((await serverCall(`/items/${usedMedal.id}/consume`, {}, 'pin')).status).toBe(200);

    // Then the game retires them: tokens switched off, potions and medals switched off and no longer usable, stars and relics removed.
    await h.apply(retiredGoods({ enabled: false, usable: false }).filter((doc) => doc.metadata.name !== 'shop-stars' && doc.metadata.name !== 'shop-relic'));
    for (const ref of [
      { kind: 'Currency', name: 'shop-stars' },
      { kind: 'ItemType', name: 'shop-relic' },
    ] as const) {
      expect((await removeManifest(h.db, { ...ref, namespace: NAMESPACE }, h.core.bus)).action).toBe('removed');
    }
    // The engine's own moves now refuse each of them, so the take-back below cannot be going through their checks.
    expectError(await serverCall('/currencies/tokens/debit', { amount: 1, reason: 'shop' }, 'after-off'), 409, 'disabled');
    expectError(await serverCall('/currencies/stars/debit', { amount: 1, reason: 'shop' }, 'after-removed'), 404, 'not-found');
    expectError(await serverCall('/item-stacks/use', { itemTypeKey: 'potion' }, 'after-unusable'), 409, 'not-usable');
    expectError(await serverCall('/item-stacks/consume', { itemTypeKey: 'relic' }, 'after-relic'), 404, 'not-found');

    store.settle(goods.storeOrderId, 'Refunded');
    await newJob().tick();
    expect((await orderRow(goods.id)).status).toBe('refunded');

    // Taken back as far as the player still held it, never below zero; the rest recorded as shortfalls.
    const balances = await h
      .db('balances as b')
      .join('inventories as i', 'i.id', 'b.inventory_id')
      .where({ 'i.player_id': buyer.id })
      .orderBy('b.currency_key');
    expect(balances.map((b) => [b.currency_key, Number(b.amount)])).toEqual([
      ['stars', 0],
      ['tokens', 0],
    ]);
    const stacks = await h
      .db('item_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .where({ 'i.player_id': buyer.id })
      .orderBy('s.item_type_key');
    expect(stacks.map((s) => [s.item_type_key, Number(s.quantity)])).toEqual([
      ['potion', 0],
      ['relic', 0],
    ]);
    const medals = await h.db('items').where({ player_id: buyer.id, item_type_key: 'medal' }).orderBy('seq');
    expect(medals.map((m) => m.consumed_at instanceof Date)).toEqual([true, true]);
    const shortfalls = await h.db('commerce_take_back_shortfalls').where({ order_id: goods.id }).orderByRaw('coalesce(currency_key, item_type_key)');
    expect(shortfalls.map((s) => [s.currency_key ?? s.item_type_key, Number(s.owed), Number(s.taken), s.reason])).toEqual([
      ['medal', 2, 1, 'commerce-refund'],
      ['potion', 3, 2, 'commerce-refund'],
      ['tokens', 100, 90, 'commerce-refund'],
    ]);

    // Each take-back's ledger row is a debit's: the same columns, made the same way (the balance after,
    // the inventory the credit went to), reason and reference the refund's, the answer naming it.
    const ledger = await h.db('ledger_entries').where({ player_id: buyer.id }).orderBy('id');
    const [debit] = ledger.filter((e) => e.reason === 'shop');
    const takeBacks = ledger.filter((e) => e.reason === 'commerce-refund');
    expect(takeBacks.map((e) => [e.currency_key, Number(e.amount), Number(e.balance_after), e.reference])).toEqual([
      ['stars', -10, 0, goods.id],
      ['tokens', -90, 0, goods.id],
    ]);
    const shapeOf = (e: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(e).map(([column, value]) => [column, value === null ? null : value instanceof Date ? 'Date' : typeof value]));
    const sameForBoth = (e: Record<string, unknown>) => ({ environment: e.environment_id, player: e.player_id, inventory: e.inventory_id });
    for (const entry of takeBacks) {
      expect(shapeOf(entry)).toEqual(shapeOf(debit));
      expect(sameForBoth(entry)).toEqual(sameForBoth(debit));
    }
    const credits = ledger.filter((e) => e.reason === 'commerce');
    expect(takeBacks.map((e) => e.inventory_id)).toEqual(credits.map((e) => e.inventory_id));
    const record = await h
      .db('idempotency_records')
      .where({ scope: 'commerce', key: `order:${goods.id}:take-back` })
      .first();
    expect(
      record.body.currencies.map((c: { currencyKey: string; transactionId: string; taken: number; balanceAfter: number }) => [
        c.currencyKey,
        c.transactionId,
        c.taken,
        c.balanceAfter,
      ]),
    ).toEqual(takeBacks.map((e) => [e.currency_key, String(e.id), -Number(e.amount), Number(e.balance_after)]));

    // Seen again, nothing changes.
    await newJob().tick();
    expect(await h.db('ledger_entries').where({ player_id: buyer.id })).toHaveLength(ledger.length);
    expect(await h.db('commerce_take_back_shortfalls').where({ order_id: goods.id })).toHaveLength(3);
  });

  test('a partial refund revokes when its line was refunded; a refunded one-time product may be ordered again', async () => {
    const buyer = await identifiedBuyer(h, store);
    const starter = await completedOrder(buyer);
    expectError(await order(h, buyer), 409, 'already-active');
    store.settle(starter.storeOrderId, 'PartialRefund');
    store.txnOf(starter.storeOrderId).items[0]!.itemstatus = 'Refunded';
    await newJob().tick();
    expect((await orderRow(starter.id)).status).toBe('refunded');
    const again = await order(h, buyer);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(starter.id);
  });
});

describe('the cursor', () => {
  test('survives a restart: a new job continues from it, applies what is new and nothing twice', async () => {
    const buyer = await identifiedBuyer(h, store);
    const first = await completedOrder(buyer, 'gem-bundle');
    store.settle(first.storeOrderId, 'Refunded');
    await newJob().tick();
    const [shop] = await h.db('projects').where({ name: 'shop' }).select('id');
    const saved = await h.db('commerce_report_cursors').where({ project_id: shop.id }).first();
    expect(new Date(saved.position).getTime()).toBeGreaterThanOrEqual(Date.parse(store.txnOf(first.storeOrderId).time));
    expect(saved.read_through).not.toBeNull();

    // "Restart": a new job instance with nothing in memory.
    const second = await completedOrder(buyer, 'gem-bundle');
    store.settle(second.storeOrderId, 'Chargedback');
    const restarted = newJob();
    await restarted.tick();
    expect((await orderRow(second.id)).status).toBe('chargedback');
    expect((await ledgerOf(buyer.id)).map((e) => e.reason)).toEqual(['commerce', 'commerce-refund', 'commerce', 'commerce-chargeback']);
    const asked = store.calls.filter((c) => c.method === 'GetReport').at(-1)!;
    expect(Date.parse(asked.params.time!)).toBeGreaterThanOrEqual(new Date(saved.position).getTime() - 1000);
  });

  test('an open order the report names but that cannot be settled now stays open without holding the cursor; the open-order pass settles it', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = await order(h, buyer);
    store.authorize(made.body.storeOrderId, true);
    store.failNext('FinalizeTxn', { status: 500 });
    const failedBefore = await metricValue('hearth_commerce_report_runs_total', { outcome: 'failed' });
    const errorsBefore = await metricValue('hearth_commerce_report_store_errors_total', { call: 'settle', reason: 'unavailable' });
    const first = await newJob({ recheckSeconds: 3600 }).tick();
    expect(first.projects.map((p) => p.outcome)).toContain('failed');
    expect((await orderRow(made.body.id)).status).toBe('awaiting-player');
    expect(await metricValue('hearth_commerce_report_runs_total', { outcome: 'failed' })).toBe(failedBefore + 1);
    expect(await metricValue('hearth_commerce_report_store_errors_total', { call: 'settle', reason: 'unavailable' })).toBe(errorsBefore + 1);
    const [shop] = await h.db('projects').where({ name: 'shop' }).select('id');
    const moved = await h.db('commerce_report_cursors').where({ project_id: shop.id }).first();
    expect(new Date(moved.position).getTime()).toBeGreaterThanOrEqual(Date.parse(store.txnOf(made.body.storeOrderId).time));

    // The store failing the report moves nothing.
    store.failNext('GetReport', { status: 503 });
    const errorsAt = await metricValue('hearth_commerce_report_store_errors_total', { call: 'GetReport', reason: 'server-error' });
    await newJob({ recheckSeconds: 3600 }).tick();
    expect(await h.db('commerce_report_cursors').where({ project_id: shop.id }).first()).toEqual(moved);
    expect(await metricValue('hearth_commerce_report_store_errors_total', { call: 'GetReport', reason: 'server-error' })).toBe(errorsAt + 1);

    // The open-order pass asks it again: finalized once, completed.
    await newJob({ recheckSeconds: 0 }).tick();
    expect((await orderRow(made.body.id)).status).toBe('completed');
    expect(store.txnOf(made.body.storeOrderId).finalized).toBe(1);
    expect(await entitlementsOf(made.body.id)).toHaveLength(1);
  });

  test('a revocation that fails holds the cursor at its order: later orders wait, and the next tick applies each once', async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    const later = await completedOrder(buyer, 'gem-bundle');
    store.settle(bundle.storeOrderId, 'Refunded');
    store.settle(later.storeOrderId, 'Chargedback');
    // The store's times are to the second: the chargeback is stamped the second after the refund, as one a moment later is.
    store.txnOf(later.storeOrderId).time = new Date(Date.parse(store.txnOf(bundle.storeOrderId).time) + 1000).toISOString().replace('.000Z', 'Z');
    // A fault of the database's: the take-back's function is missing (this test's own database).
    await h.db.raw('ALTER FUNCTION hearth_commerce_take_back(bigint, text, jsonb) RENAME TO hearth_commerce_take_back_away');
    let outcome;
    try {
      outcome = await newJob().tick();
    } finally {
      await h.db.raw('ALTER FUNCTION hearth_commerce_take_back_away(bigint, text, jsonb) RENAME TO hearth_commerce_take_back');
    }
    expect(outcome.projects.map((p) => p.outcome)).toContain('failed');
    expect((await orderRow(bundle.id)).status).toBe('completed');
    expect((await orderRow(later.id)).status).toBe('completed');
    expect(await changesOf(bundle.id)).toEqual(['granted']); // rolled back with the take-back
    const [shop] = await h.db('projects').where({ name: 'shop' }).select('id');
    const held = await h.db('commerce_report_cursors').where({ project_id: shop.id }).first();
    expect(new Date(held.position).getTime()).toBe(Date.parse(store.txnOf(bundle.storeOrderId).time));
    expect(new Date(held.position).getTime()).toBeLessThan(Date.parse(store.txnOf(later.storeOrderId).time));

    await newJob().tick();
    expect((await orderRow(bundle.id)).status).toBe('refunded');
    expect((await orderRow(later.id)).status).toBe('chargedback');
    expect(await changesOf(bundle.id)).toEqual(['granted', 'revoked']);
    expect((await ledgerOf(buyer.id)).map((e) => e.amount)).toEqual([100, 100, -100, -100]);
    const moved = await h.db('commerce_report_cursors').where({ project_id: shop.id }).first();
    expect(new Date(moved.position).getTime()).toBe(Date.parse(store.txnOf(later.storeOrderId).time));
    // The chargeback was stamped a second ahead, and the cursor with it: the tests after settle orders at
    // the store's real time (whole seconds), so the wall clock is let pass the cursor first (at most 1 s).
    await eventually(async () => Date.now() >= new Date(moved.position).getTime() + 1000, 3000, 50);
  });
});

describe('running in the worker', () => {
  test('settings from the environment: defaults, each variable, 0 switches the job off, a malformed one refused by name', () => {
    expect(loadStoreReportSettings({})).toEqual({
      intervalSeconds: 60,
      maxResults: 500,
      openOrdersPerTick: 50,
      recheckSeconds: 120,
      abandonedAfterSeconds: 3600,
    });
    expect(
      loadStoreReportSettings({
        COMMERCE_REPORT_INTERVAL_SECONDS: '5',
        COMMERCE_REPORT_MAX_RESULTS: '1000',
        COMMERCE_REPORT_OPEN_ORDERS: '10',
        COMMERCE_REPORT_RECHECK_SECONDS: '30',
        COMMERCE_ABANDONED_ORDER_SECONDS: '600',
      }),
    ).toEqual({ intervalSeconds: 5, maxResults: 1000, openOrdersPerTick: 10, recheckSeconds: 30, abandonedAfterSeconds: 600 });
    expect(loadStoreReportSettings({ COMMERCE_REPORT_INTERVAL_SECONDS: '0' })).toBeNull();
    expect(() => loadStoreReportSettings({ COMMERCE_REPORT_MAX_RESULTS: '1001' })).toThrow(/COMMERCE_REPORT_MAX_RESULTS/);
    expect(() => loadStoreReportSettings({ COMMERCE_REPORT_INTERVAL_SECONDS: 'soon' })).toThrow(/COMMERCE_REPORT_INTERVAL_SECONDS/);
  });

  test('started, it ticks at once and then every interval; stopped, it waits for the tick in hand and ticks no more', async () => {
    const buyer = await identifiedBuyer(h, store);
    const bundle = await completedOrder(buyer, 'gem-bundle');
    store.settle(bundle.storeOrderId, 'Refunded');
    const before = store.count('GetReport');
    const clock = new TestClock();
    const job = newJob({ intervalSeconds: 60 }, clock);
    job.start();
    // The first tick at once, one report per project; when it ends, the next is set an interval away.
    await eventually(async () => clock.pending === 1, 5000);
    expect(store.count('GetReport') - before).toBe(2);
    expect((await orderRow(bundle.id)).status).toBe('refunded');
    await clock.advance(59_000);
    expect(clock.pending).toBe(1); // not due yet: no tick
    expect(store.count('GetReport') - before).toBe(2);
    await clock.advance(1_000); // due: the second tick is in hand
    await job.stop();
    expect(store.count('GetReport') - before).toBe(4); // stop waited for it
    expect(clock.pending).toBe(0); // and nothing is set to tick again
    await clock.advance(3_600_000);
    expect(store.count('GetReport') - before).toBe(4);
  });
});

describe('metrics', () => {
  test('runs, last success and the cursor lag per project', async () => {
    const before = await metricValue('hearth_commerce_report_runs_total', { outcome: 'succeeded' });
    const started = Date.now() / 1000;
    await newJob().tick();
    expect(await metricValue('hearth_commerce_report_runs_total', { outcome: 'succeeded' })).toBe(before + 2);
    expect(await metricValue('hearth_commerce_report_last_success_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(started));
    const lags = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'hearth_commerce_report_cursor_lag_seconds')!.values;
    expect(lags.map((v) => v.labels.project).sort()).toEqual(['shop', 'shop2']);
    for (const v of lags) expect(v.value).toBeLessThan(60);
  });
});

describe('isolation', () => {
  test("a project's orders are applied in its own environments only; another project's feed and ledger are untouched", async () => {
    const live = await identifiedBuyer(h, store);
    const other = await identifiedBuyer(h, store, {}, 'shop2-live-key');
    const liveOrder = await completedOrder(live);
    const otherOrder = await completedOrder(other);
    store.settle(liveOrder.storeOrderId, 'Refunded');
    await newJob().tick();
    expect((await orderRow(liveOrder.id)).status).toBe('refunded');
    expect((await orderRow(otherOrder.id)).status).toBe('completed');
    expect(await changesOf(otherOrder.id)).toEqual(['granted']);
    const otherFeed = await call(h.base, 'GET', '/commerce/grants/changes?limit=100', { token: h.serverKeys['shop2-live-key'] });
    expect(otherFeed.body.items.map((c: { change: string; grant: { orderId: string } }) => [c.change, c.grant.orderId])).toEqual([['granted', otherOrder.id]]);
    store.settle(otherOrder.storeOrderId, 'Chargedback');
    await newJob().tick();
    expect((await orderRow(otherOrder.id)).status).toBe('chargedback');
    expect(await changesOf(liveOrder.id)).toEqual(['granted', 'revoked']);
  });

  test("environments of one project: a refund in shop-test is revoked in shop-test's feed, and shop-live's feed does not show it", async () => {
    const tester = await identifiedBuyer(h, store, {}, 'shop-test-key');
    const testOrder = await completedOrder(tester, 'test-only');
    const liveFeedBefore = (await call(h.base, 'GET', '/commerce/grants/changes?limit=100', { token: h.serverKeys['shop-live-key'] })).body.next;
    store.settle(testOrder.storeOrderId, 'RefundedSuspectedFraud');
    await newJob().tick();
    expect((await orderRow(testOrder.id)).status).toBe('refunded');
    const testFeed = await call(h.base, 'GET', '/commerce/grants/changes?limit=100', { token: h.serverKeys['shop-test-key'] });
    expect(testFeed.body.items.map((c: { change: string; grant: { orderId: string } }) => [c.change, c.grant.orderId])).toEqual([
      ['granted', testOrder.id],
      ['revoked', testOrder.id],
    ]);
    const liveFeed = await call(h.base, 'GET', `/commerce/grants/changes?limit=100&cursor=${encodeURIComponent(liveFeedBefore)}`, {
      token: h.serverKeys['shop-live-key'],
    });
    expect(liveFeed.body.items).toEqual([]);
    const entitlements = await call(h.base, 'GET', '/players/me/entitlements', { token: tester.token });
    expect(
      entitlements.body.items.map((e: { orderId: string; status: string; revokedAt: string | null }) => [e.orderId, e.status, typeof e.revokedAt]),
    ).toEqual([[testOrder.id, 'revoked', 'string']]);
  });
});

describe('a project whose publisher key this deployment does not hold', () => {
  test('is passed over, not failed: no store call, said once in the log, counted as unconfigured; with the key back it runs', async () => {
    const lines: { msg: string; projectId?: number; level: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const job = storeReportJob({
      db: h.db,
      logger: pino({ level: 'info' }, sink),
      settings: SETTINGS,
      commerce: h.core.commerce,
      observer: metrics.storeReport,
    });
    const reportsBefore = store.count('GetReport');
    const unconfiguredBefore = await metricValue('hearth_commerce_report_runs_total', { outcome: 'unconfigured' });
    const failedBefore = await metricValue('hearth_commerce_report_runs_total', { outcome: 'failed' });
    delete process.env[STORE_KEY_VARIABLE]; // both projects read their key from this variable
    try {
      const ticks = [await job.tick(), await job.tick()];
      for (const tick of ticks) expect(tick.projects.map((p) => p.outcome)).toEqual(['unconfigured', 'unconfigured']);
      expect(store.count('GetReport')).toBe(reportsBefore);
      expect(await metricValue('hearth_commerce_report_runs_total', { outcome: 'unconfigured' })).toBe(unconfiguredBefore + 4);
      expect(await metricValue('hearth_commerce_report_runs_total', { outcome: 'failed' })).toBe(failedBefore);
      const said = lines.filter((l) => l.msg.includes('no publisher key'));
      expect(said.map((l) => l.projectId).sort()).toEqual(ticks[0].projects.map((p) => p.projectId).sort()); // once per project, over two ticks
      expect(lines.filter((l) => l.level >= 40)).toEqual([]); // no warning
    } finally {
      process.env[STORE_KEY_VARIABLE] = STORE_KEY;
    }
    expect((await job.tick()).projects.map((p) => p.outcome)).toEqual(['succeeded', 'succeeded']);
    expect(store.count('GetReport')).toBe(reportsBefore + 2);
  });
});
