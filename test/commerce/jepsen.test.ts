/**
 * A Jepsen-style check of commerce (docs/commerce.md "Exactly once"): many concurrent clients over a
 * few players with store accounts, against one API and the stand-in store with random delays and
 * failures. Clients make orders under Idempotency-Keys retried at random (at once, racing the first,
 * and later), the store's players approve, decline or walk away, clients send authorizations (some
 * twice, some racing) and reconciliations, report-job runners tick at the same time, a game server
 * acknowledges grants and follows the grants feed, players spend the gold they bought, and the store
 * refunds and charges back orders it took the money for, mid-run. Products give an entitlement, gold
 * (through the money engine) and items: a one-time starter (a counted stack) and a repeatable pouch
 * (one-by-one items).
 *
 * Afterwards (once everything has settled), from the database, the API and the stand-in's record of
 * calls: FinalizeTxn reached the store at most once per order and nothing was granted without it;
 * every grant and revocation is one entitlement and one feed change, and matches what the store holds;
 * the feed read from the start (and as a server followed it during the run) gives every change once,
 * in order; balances are their ledgers, never below zero, and the commerce credits and take-backs
 * are what the orders gave and refunds took back (shortfalls accounting for the rest); items likewise;
 * each Idempotency-Key made one order and its retries answered it; a one-time product was never held
 * twice at once; the catalog's `active` is the database's.
 * Bounded: a fixed number of operations, a fixed seed per run printed on failure.
 */
import { createLogger } from '@hearth/core';
import { storeReportJob } from '@hearth/core/commerce';
import { type Harness, startHarness } from '../support/harness';
import { call, type Reply } from '../support/http';
import { StoreStandIn, type StandInTxn } from '../support/store-standin';
import { currency, environment, itemType, plan, product, project, serverKey } from '../support/manifests';
import { PATTERNS, type Pattern, random, sendAsPatterned } from '../economy/jepsen-model';
import { reportFigure } from '../support/figures';
import { STORE_KEY, STORE_KEY_VARIABLE, authorize, identifiedBuyer, order, reconcile, storeSettings, type Buyer } from './helpers';

// A guard against a hang, not a speed bound: 1,200 operations take about 50 s on 2 cores, and
// over 120 s in a first `make test`, where the suites run niced beside the Go build of the tools.
jest.setTimeout(300_000);

const OPERATIONS = Number(process.env.COMMERCE_JEPSEN_OPERATIONS ?? 1200);
const CLIENTS = 20;
const PLAYERS = 12;

/** What each product gives: its sku, whether one-time, the gold and the items of a completed order. */
const STARTER = { sku: 'starter', entitlement: 'starter', repeatable: false, gold: 120, item: { itemTypeKey: 'potion', quantity: 2 } };
const POUCH = { sku: 'pouch', entitlement: 'pouch', repeatable: true, gold: 300, item: { itemTypeKey: 'charm', quantity: 1 } };
const PRODUCTS = [STARTER, POUCH];
/** Short, so that overlays the player walked away from are failed by the job during the run and the player may order again. */
const ABANDONED_AFTER_SECONDS = 1;
const TAKE_BACK_STATUSES = ['Refunded', 'Chargedback', 'RefundedSuspectedFraud', 'RefundedFriendlyFraud'] as const;
const REFUNDED_AT_STORE = new Set<string>(['Refunded', 'RefundedSuspectedFraud', 'RefundedFriendlyFraud']);

function manifests(store: StoreStandIn) {
  return [
    plan('test'),
    project('shop', { store: storeSettings(store) }),
    environment('shop-live', 'shop'),
    serverKey('shop-live-key', 'shop-live'),
    currency('shop-gold', { environment: 'shop-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
    itemType('shop-potion', { environment: 'shop-live', key: 'potion', name: 'Potion', category: 'misc', ownership: 'counted' }),
    itemType('shop-charm', { environment: 'shop-live', key: 'charm', name: 'Charm', category: 'misc', ownership: 'one-by-one' }),
    ...PRODUCTS.map((p, i) =>
      product(p.sku, {
        environment: 'shop-live',
        sku: p.sku,
        name: p.sku,
        storeItemId: 100 + i,
        entitlement: p.entitlement,
        repeatable: p.repeatable,
        prices: [{ currency: 'USD', amount: 199 + i }],
        currencies: [{ currencyKey: 'gold', amount: p.gold }],
        items: [p.item],
      }),
    ),
  ];
}

interface OrderOp {
  key: string;
  buyer: Buyer;
  sku: string;
  pattern: Pattern;
  answers: Reply[];
}

/** Every answer a route gave during the run, by route, for the checks afterwards (a client that threw would leave the others running). */
type Answered = { route: string; reply: Reply };

describe('commerce under concurrency, retries, refunds and the report job', () => {
  let h: Harness;
  let store: StoreStandIn;
  let serverToken: string;
  const seed = Number(process.env.COMMERCE_JEPSEN_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    process.env[STORE_KEY_VARIABLE] = STORE_KEY;
    store = await new StoreStandIn([STORE_KEY]).start();
    h = await startHarness({ manifests: manifests(store) });
    serverToken = h.serverKeys['shop-live-key'];
  });
  afterAll(async () => {
    await h.close();
    await store.stop();
  });

  test(`every order is settled once, granted once, revoked once, and every unit of value accounted for (seed ${seed})`, async () => {
    const rand = random(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const pause = (ms: number) => new Promise((r) => setTimeout(r, Math.floor(rand() * ms)));
    const job = () =>
      storeReportJob({
        db: h.db,
        logger: createLogger('silent'),
        settings: { intervalSeconds: 3600, maxResults: 500, openOrdersPerTick: 50, recheckSeconds: 0, abandonedAfterSeconds: ABANDONED_AFTER_SECONDS },
        commerce: h.core.commerce,
      });

    const buyers: Buyer[] = [];
    for (let i = 0; i < PLAYERS; i++) buyers.push(await identifiedBuyer(h, store, {}, 'shop-live-key'));
    const answered: Answered[] = [];
    const note = (route: string) => (reply: Reply) => {
      answered.push({ route, reply });
      return reply;
    };
    const orders: OrderOp[] = [];
    const ticks: string[] = [];
    let spent = 0;
    /** What the players used of what products gave: potions by player, charms by id. */
    const potionsUsed = new Map<string, number>();
    const charmsUsed = new Set<string>();
    /** Orders whose FinalizeTxn took the money but whose answer was lost. */
    const answerLost = new Set<string>();

    // A game server following the grants feed all along, as servers do: what it saw is checked against the database.
    const followed: { change: string; grantId: string }[] = [];
    let cursor: string | undefined;
    const followOnce = async () => {
      const page = note('changes')(
        await call(h.base, 'GET', `/commerce/grants/changes?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: serverToken }),
      );
      for (const item of page.body.items ?? []) followed.push({ change: item.change, grantId: item.grant.id });
      if (page.status === 200) cursor = page.body.next;
      return (page.body.items ?? []).length;
    };
    let running = true;
    const follower = (async () => {
      while (running) {
        await followOnce();
        await pause(20);
      }
    })();

    const sendOrder = async (op: OrderOp) => {
      op.answers.push(note('order')(await order(h, op.buyer, { sku: op.sku, provider: 'steam', language: 'en' }, { 'Idempotency-Key': op.key })));
    };

    const operations: (() => Promise<void>)[] = Array.from({ length: OPERATIONS }, (_, i) => {
      const roll = rand();
      const buyer = pick(buyers);
      if (roll < 0.45) {
        // An order, retried under its key; the player answers the overlay (or walks away); the client reports it.
        const op: OrderOp = { key: `cj-${seed}-${i}`, buyer, sku: rand() < 0.3 ? STARTER.sku : POUCH.sku, pattern: pick(PATTERNS), answers: [] };
        orders.push(op);
        const choice = rand();
        const hints = Math.floor(rand() * 4);
        return async () => {
          await sendAsPatterned(op, sendOrder, rand);
          const made = op.answers.find((a) => a.status === 201)?.body;
          if (!made) return;
          await pause(30);
          if (choice < 0.7) store.authorize(made.storeOrderId, true);
          else if (choice < 0.85) store.authorize(made.storeOrderId, false);
          const hint = () => authorize(h, buyer, made.storeOrderId, choice < 0.7).then(note('authorize'));
          if (hints === 1) await hint();
          if (hints === 2) await Promise.all([hint(), hint(), hint()]);
          if (hints === 3) {
            await hint();
            await pause(30);
            await hint();
          }
        };
      }
      if (roll < 0.55) return async () => void (await reconcile(h, buyer).then(note('reconcile')));
      if (roll < 0.63) return async () => void ticks.push(...(await job().tick()).projects.map((p) => p.outcome));
      if (roll < 0.7) {
        // A server acknowledges a grant it was given (sometimes twice at once).
        return async () => {
          const open = note('grants')(await call(h.base, 'GET', '/commerce/grants?limit=5', { token: serverToken }));
          const grant = open.status === 200 && open.body.items.length > 0 ? pick(open.body.items as { id: string }[]) : undefined;
          if (!grant) return;
          const ack = () => call(h.base, 'POST', `/commerce/grants/${grant.id}/ack`, { token: serverToken }).then(note('ack'));
          await (rand() < 0.5 ? ack() : Promise.all([ack(), ack()]));
        };
      }
      if (roll < 0.72) {
        // The store refunds or charges back an order it took the money for, whether or not Hearth has granted it yet.
        const status = pick(TAKE_BACK_STATUSES);
        const which = rand();
        return async () => {
          const taken = [...store.txns.values()].filter((t) => t.status === 'Succeeded');
          if (taken.length > 0) store.settle(taken[Math.floor(which * taken.length)].orderid, status);
        };
      }
      if (roll >= 0.82 && roll < 0.9) {
        // The player uses what a product gave: a potion of the stack, or one of its charms (so that a refund may find them gone).
        const potion = rand() < 0.5;
        const which = rand();
        return async () => {
          const headers = { 'Idempotency-Key': `cj-use-${seed}-${i}` };
          if (potion) {
            const reply = note('use-potion')(
              await call(h.base, 'POST', `/players/${buyer.id}/item-stacks/consume`, {
                token: serverToken,
                body: { itemTypeKey: 'potion', quantity: 1 },
                headers,
              }),
            );
            if (reply.status === 200) potionsUsed.set(buyer.id, (potionsUsed.get(buyer.id) ?? 0) + 1);
            return;
          }
          const held = await h.db('items').where({ player_id: buyer.id, item_type_key: 'charm' }).whereNull('consumed_at').orderBy('seq').pluck('id');
          if (held.length === 0) return;
          const itemId = held[Math.floor(which * held.length)];
          const reply = note('use-charm')(await call(h.base, 'POST', `/players/${buyer.id}/items/${itemId}/consume`, { token: serverToken, headers }));
          if (reply.status === 200) charmsUsed.add(itemId);
        };
      }
      if (roll < 0.87) {
        // The player spends gold (so that a refund may find less than it gave).
        const amount = 1 + Math.floor(rand() * 250);
        return async () => {
          const reply = note('spend')(
            await call(h.base, 'POST', `/players/${buyer.id}/currencies/gold/debit`, {
              token: serverToken,
              body: { amount, reason: 'jepsen.spend', reference: `op ${i}` },
              headers: { 'Idempotency-Key': `cj-spend-${seed}-${i}` },
            }),
          );
          if (reply.status === 200) spent++;
        };
      }
      if (roll < 0.95) return async () => void (await call(h.base, 'GET', '/commerce/catalog', { token: buyer.token }).then(note('catalog')));
      if (roll < 0.965) {
        // The store takes the money at FinalizeTxn but its answer is lost (a 500): the order is open here, Succeeded there.
        return async () => {
          store.onNext('FinalizeTxn', (params) => {
            const txn = store.txns.get(params.orderid!);
            if (txn?.status !== 'Approved') return;
            Object.assign(txn, { status: 'Succeeded', finalized: txn.finalized + 1 });
            txn.items.forEach((item) => (item.itemstatus = 'Succeeded'));
            answerLost.add(txn.orderid);
          });
          store.failNext('FinalizeTxn', { status: 500 });
        };
      }
      // The store slows down, or fails a call (out of reach: nothing happens at the store).
      const method = pick(['QueryTxn', 'FinalizeTxn', 'InitTxn', 'GetReport'] as const);
      const failing = rand() < 0.3 && (method === 'QueryTxn' || method === 'GetReport');
      const ms = 20 + Math.floor(rand() * 150);
      return async () => (failing ? store.failNext(method, { status: 500 }) : store.delayNext(method, ms));
    });

    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < operations.length) await operations[next++]();
      }),
    );
    const elapsed = Date.now() - started;

    // Quiet: whatever the store holds is settled by the routes and the job (stray injected failures and lost
    // answers are used up on the way), until no order waits on what the store already said.
    const players = buyers.map((b) => b.id);
    const unsettled = async () =>
      (await h.db('commerce_orders').whereIn('player_id', players)).filter((row) => {
        const status = store.txns.get(row.store_order_id)?.status ?? 'unknown';
        return (['pending', 'awaiting-player'].includes(row.status) && status !== 'Init') || (row.status === 'completed' && status !== 'Succeeded');
      }).length;
    let quietRounds = 0;
    do {
      for (const buyer of buyers) await reconcile(h, buyer);
      await job().tick();
    } while (++quietRounds < 10 && (await unsettled()) > 0);
    running = false;
    await follower;
    while ((await followOnce()) > 0);

    // Every answer was held to the document and was a success or a refusal the route may give under this load; never a fault.
    expect(answered.filter((a) => !a.reply.contract.checked).map((a) => `${a.route} ${a.reply.status}`)).toEqual([]);
    const allowed: Record<string, Record<number, string[]>> = {
      order: { 201: [], 409: ['order-in-progress', 'already-active'] },
      authorize: { 200: [], 503: ['unavailable'] },
      reconcile: { 200: [], 503: ['unavailable'] },
      spend: { 200: [], 409: ['insufficient-balance'] },
      'use-potion': { 200: [], 404: ['not-found'], 409: ['insufficient-balance'] },
      // A refund may consume the charm between the read and the use.
      'use-charm': { 200: [], 409: ['already-consumed'] },
    };
    for (const { route, reply } of answered) {
      const ok = allowed[route] ?? { 200: [] };
      const fine = reply.status in ok && (ok[reply.status].length === 0 || ok[reply.status].includes(reply.body?.error));
      // One store refusal is expected: a settler that read Approved calls FinalizeTxn after another's lost answer
      // and a refund, and the store answers "not approved" (5); the order stays open and the next settlement moves it.
      const notApproved = (route === 'authorize' || route === 'reconcile') && reply.status === 502 && reply.body?.details?.storeErrorCode === 5;
      if (!fine && !notApproved) expect({ route, status: reply.status, body: reply.body }).toBeUndefined();
    }

    const db = h.db;
    const rows = await db('commerce_orders').whereIn('player_id', players).orderBy('created_at');
    const entitlements = await db('commerce_entitlements').whereIn('player_id', players);
    const changes = await db('commerce_grant_changes').orderBy('seq');
    const entitlementOf = new Map(entitlements.map((e) => [e.order_id as string, e]));
    const skuOf = new Map(PRODUCTS.map((p) => [p.sku, p]));

    // FinalizeTxn reached the store at most once per order, and the store took the money at most once. Only when
    // its answer was lost may a settler that read Approved before it call again: the store answers "already
    // committed" (6) and takes nothing.
    const finalizes = new Map<string, number>();
    for (const c of store.calls.filter((c) => c.method === 'FinalizeTxn')) finalizes.set(c.params.orderid!, (finalizes.get(c.params.orderid!) ?? 0) + 1);
    expect([...finalizes].filter(([orderid, n]) => n > (answerLost.has(orderid) ? 2 : 1))).toEqual([]);
    expect([...store.txns.values()].filter((t) => t.finalized > 1)).toEqual([]);

    // Each order stands where the store's word puts it, once settled: granted exactly when the store took the money.
    const txnOf = (storeOrderId: string): StandInTxn | undefined => store.txns.get(storeOrderId);
    for (const row of rows) {
      const txn = txnOf(row.store_order_id);
      const granted = entitlementOf.get(row.id);
      const view = { order: row.id, status: row.status, store: txn?.status ?? 'unknown', finalized: txn?.finalized ?? 0, granted: Boolean(granted) };
      // Nothing granted without the store's Approved and our one FinalizeTxn (or its Succeeded).
      if (granted) expect(view).toEqual({ ...view, finalized: 1 });
      // The money taken: granted and held; taken back exactly when the store took it back (granted or not yet: docs/commerce.md).
      if (txn?.status === 'Succeeded') expect(view).toEqual({ ...view, granted: true, status: 'completed' });
      else if (txn?.finalized === 1) expect(view).toEqual({ ...view, status: txn.status === 'Chargedback' ? 'chargedback' : 'refunded' });
      else if (txn?.status === 'Failed') expect(view).toEqual({ ...view, status: 'failed' });
      // Left in the overlay: still awaiting the player, or failed by the job past the abandoned age; an approval
      // that came after that (a slow player) is never finalized: nothing was taken.
      else if (txn?.status === 'Approved') expect(view).toEqual({ ...view, status: 'failed' });
      else if (txn)
        expect({ ...view, status: view.status === 'failed' ? 'awaiting-player' : view.status }).toEqual({ ...view, status: 'awaiting-player', store: 'Init' });
      else expect(view.status === 'pending' || view.status === 'failed').toBe(true);
    }

    // One entitlement and one `granted` change per grant; one `revoked` change per revocation; no change without its order's state.
    const rowById = new Map(rows.map((r) => [r.id as string, r]));
    for (const e of entitlements) {
      const row = rowById.get(e.order_id)!;
      const own = changes.filter((c) => c.entitlement_id === e.id).map((c) => c.change);
      const revoked = row.status === 'refunded' || row.status === 'chargedback';
      expect({ order: row.id, status: row.status, entitlement: e.status, revokedAt: Boolean(e.revoked_at), changes: own }).toEqual({
        order: row.id,
        status: revoked ? row.status : 'completed',
        entitlement: revoked ? 'revoked' : 'active',
        revokedAt: revoked,
        changes: revoked ? ['granted', 'revoked'] : ['granted'],
      });
      expect(e.sku).toBe(row.sku);
    }
    expect(changes.filter((c) => !entitlements.some((e) => e.id === c.entitlement_id))).toEqual([]);

    // Acknowledgements: every answer for a grant (racing ones too) is its first acknowledgement, as the database keeps
    // it; GET /commerce/grants is then exactly the active grants no server acknowledged, oldest first.
    const entitlementById = new Map(entitlements.map((e) => [e.id as string, e]));
    for (const { reply } of answered.filter((a) => a.route === 'ack')) {
      const kept = entitlementById.get(reply.body.id)!;
      expect({ grant: reply.body.id, acknowledgedAt: reply.body.acknowledgedAt }).toEqual({
        grant: reply.body.id,
        acknowledgedAt: new Date(kept.acknowledged_at).toISOString(),
      });
    }
    const unacknowledged: string[] = [];
    for (let next: string | null = ''; next !== null;) {
      const grants: Reply = await call(h.base, 'GET', `/commerce/grants?limit=9${next ? `&cursor=${encodeURIComponent(next)}` : ''}`, { token: serverToken });
      unacknowledged.push(...grants.body.items.map((g: { id: string }) => g.id));
      next = grants.body.next;
    }
    // (Ordered by PostgreSQL: granted_at has microseconds a JS Date does not.)
    const waiting = await h
      .db('commerce_entitlements')
      .whereIn('player_id', players)
      .where({ status: 'active' })
      .whereNull('acknowledged_at')
      .orderBy(['granted_at', 'id'])
      .pluck('id');
    expect(unacknowledged).toEqual(waiting);

    // The feed read from the start with `next`, and as the server followed it during the run: every change once, in order.
    const fromStart: { change: string; grantId: string }[] = [];
    let page = await call(h.base, 'GET', '/commerce/grants/changes?limit=9', { token: serverToken });
    while (page.body.items.length > 0) {
      fromStart.push(...page.body.items.map((item: any) => ({ change: item.change, grantId: item.grant.id })));
      page = await call(h.base, 'GET', `/commerce/grants/changes?limit=9&cursor=${encodeURIComponent(page.body.next)}`, { token: serverToken });
    }
    const inDb = changes.map((c) => ({ change: c.change, grantId: c.entitlement_id }));
    expect(fromStart).toEqual(inDb);
    expect(followed).toEqual(inDb);

    // Balances are their ledgers, never below zero; the commerce credits and take-backs are the orders' grants and refunds.
    const ledger = await db('ledger_entries').whereIn('player_id', players).orderBy('id');
    const balances = await db('balances as b').join('inventories as i', 'i.id', 'b.inventory_id').whereIn('i.player_id', players).select('b.*', 'i.player_id');
    for (const balance of balances) {
      let runningTotal = 0;
      for (const e of ledger.filter((x) => x.inventory_id === balance.inventory_id && x.currency_key === balance.currency_key)) {
        runningTotal += Number(e.amount);
        expect({ entry: e.id, balanceAfter: Number(e.balance_after) }).toEqual({ entry: e.id, balanceAfter: runningTotal });
        expect(runningTotal).toBeGreaterThanOrEqual(0);
      }
      expect(Number(balance.amount)).toBe(runningTotal);
    }
    const shortfalls = await db('commerce_take_back_shortfalls').whereIn('player_id', players);
    const knownReasons = new Set(['commerce', 'commerce-refund', 'commerce-chargeback', 'jepsen.spend']);
    expect(ledger.filter((e) => !knownReasons.has(e.reason))).toEqual([]);
    expect(ledger.filter((e) => e.reason !== 'jepsen.spend' && !rowById.has(e.reference))).toEqual([]);
    for (const row of rows) {
      const given = skuOf.get(row.sku)!;
      const granted = entitlementOf.has(row.id);
      const revoked = row.status === 'refunded' || row.status === 'chargedback';
      const credits = ledger.filter((e) => e.reference === row.id && e.reason === 'commerce').map((e) => Number(e.amount));
      expect({ order: row.id, credits }).toEqual({ order: row.id, credits: granted ? [given.gold] : [] });
      const takeBacks = ledger.filter((e) => e.reference === row.id && e.reason.startsWith('commerce-'));
      const owed = shortfalls.filter((s) => s.order_id === row.id && s.currency_key === 'gold');
      if (!(granted && revoked)) {
        expect({ order: row.id, takeBacks, owed }).toEqual({ order: row.id, takeBacks: [], owed: [] });
        continue;
      }
      const reason = row.status === 'refunded' ? 'commerce-refund' : 'commerce-chargeback';
      expect(takeBacks.every((e) => e.reason === reason)).toBe(true);
      expect(takeBacks.length).toBeLessThanOrEqual(1);
      const taken = takeBacks.reduce((sum, e) => sum - Number(e.amount), 0);
      expect(owed.length).toBeLessThanOrEqual(1);
      // What was taken, plus what is owed, is what the order gave; a shortfall says what it took.
      expect({ order: row.id, taken, short: owed.map((s) => ({ owed: Number(s.owed), taken: Number(s.taken) })) }).toEqual({
        order: row.id,
        taken,
        short: taken === given.gold ? [] : [{ owed: given.gold, taken }],
      });
    }

    // Items granted once per grant, and taken back with its refund as far as the player had not used them (the rest a shortfall).
    const stacks = await db('item_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .whereIn('i.player_id', players)
      .select('i.player_id', 's.item_type_key', 's.quantity');
    const items = await db('items').whereIn('player_id', players);
    const itemById = new Map(items.map((it) => [it.id as string, it]));
    const itemGrants = await db('commerce_order_item_grants').whereIn(
      'order_id',
      rows.map((r) => r.id),
    );
    const potionsTaken = new Map<string, number>();
    for (const row of rows) {
      const granted = entitlementOf.has(row.id);
      const revoked = granted && (row.status === 'refunded' || row.status === 'chargedback');
      const record = itemGrants.filter((g) => g.order_id === row.id);
      expect({ order: row.id, record: record.map((g) => ({ itemTypeKey: g.item_type_key, quantity: Number(g.quantity) })) }).toEqual({
        order: row.id,
        record: granted ? [skuOf.get(row.sku)!.item] : [],
      });
      const short = shortfalls
        .filter((sf) => sf.order_id === row.id && sf.item_type_key !== null)
        .map((sf) => ({ itemTypeKey: sf.item_type_key, owed: Number(sf.owed), taken: Number(sf.taken) }));
      if (!revoked) {
        expect({ order: row.id, short }).toEqual({ order: row.id, short: [] });
        // Its charms are held unless the player used them.
        for (const id of record.flatMap((g) => g.item_ids ?? []))
          expect({ charm: id, consumed: itemById.get(id).consumed_at !== null }).toEqual({ charm: id, consumed: charmsUsed.has(id) });
        continue;
      }
      if (row.sku === POUCH.sku) {
        // The grant's own charm is consumed by the take-back; one the player had used already is the shortfall.
        const ids: string[] = record.flatMap((g) => g.item_ids ?? []);
        expect(ids.map((id) => itemById.get(id).consumed_at !== null)).toEqual(ids.map(() => true));
        const used = ids.filter((id) => charmsUsed.has(id)).length;
        expect({ order: row.id, short }).toEqual({
          order: row.id,
          short: used > 0 ? [{ itemTypeKey: 'charm', owed: ids.length, taken: ids.length - used }] : [],
        });
      } else {
        // Potions: taken from the stack down to zero at most; what was not there is the shortfall.
        expect(short.length).toBeLessThanOrEqual(1);
        if (short[0]) expect(short[0]).toEqual({ itemTypeKey: 'potion', owed: STARTER.item.quantity, taken: short[0].taken });
        potionsTaken.set(row.player_id, (potionsTaken.get(row.player_id) ?? 0) + (short[0]?.taken ?? STARTER.item.quantity));
      }
    }
    for (const buyer of buyers) {
      const granted = rows.filter((r) => r.player_id === buyer.id && entitlementOf.has(r.id));
      const potions = stacks.filter((st) => st.player_id === buyer.id && st.item_type_key === 'potion').reduce((n, st) => n + Number(st.quantity), 0);
      const potionsGiven = granted.filter((r) => r.sku === STARTER.sku).length * STARTER.item.quantity;
      expect({ player: buyer.id, potions }).toEqual({
        player: buyer.id,
        potions: potionsGiven - (potionsTaken.get(buyer.id) ?? 0) - (potionsUsed.get(buyer.id) ?? 0),
      });
      // Every charm was made by one pouch's grant, each pouch's grant made its charms once.
      const charms = items.filter((it) => it.player_id === buyer.id && it.item_type_key === 'charm');
      expect(charms.length).toBe(granted.filter((r) => r.sku === POUCH.sku).length * POUCH.item.quantity);
    }

    // Each Idempotency-Key made at most one order, and every 201 under it answered that order.
    for (const op of orders) {
      const made = rows.filter((r) => r.idempotency_key === op.key);
      const ids = [...new Set(op.answers.filter((a) => a.status === 201).map((a) => a.body.id))];
      expect({ key: op.key, orders: made.map((r) => r.id) }).toEqual({ key: op.key, orders: ids });
    }
    expect(rows.filter((r) => !orders.some((op) => op.key === r.idempotency_key))).toEqual([]);

    // A one-time product never held twice at once: its entitlements' spans do not overlap.
    for (const buyer of buyers) {
      const spans = entitlements
        .filter((e) => e.player_id === buyer.id && e.sku === STARTER.sku)
        .map((e) => ({ order: e.order_id as string, from: new Date(e.granted_at).getTime(), to: e.revoked_at ? new Date(e.revoked_at).getTime() : Infinity }))
        .sort((a, b) => a.from - b.from);
      for (let i = 1; i < spans.length; i++)
        expect({ ...spans[i], overlaps: spans[i].from < spans[i - 1].to, previous: spans[i - 1] }).toEqual({
          ...spans[i],
          overlaps: false,
          previous: spans[i - 1],
        });
      expect(spans.filter((s) => s.to === Infinity).length).toBeLessThanOrEqual(1);
    }

    // The catalog's `active`, read through the API, is the database's active entitlements.
    for (const buyer of buyers) {
      const catalog = await call(h.base, 'GET', '/commerce/catalog', { token: buyer.token });
      const active = new Set(entitlements.filter((e) => e.player_id === buyer.id && e.status === 'active').map((e) => e.sku));
      const listed = new Map((catalog.body.products as { sku: string; active: boolean }[]).map((p) => [p.sku, p.active]));
      expect({ player: buyer.id, active: Object.fromEntries(listed) }).toEqual({
        player: buyer.id,
        active: Object.fromEntries(PRODUCTS.map((p) => [p.sku, active.has(p.sku)])),
      });
    }

    // The run did exercise what it claims to: replays, grants, revocations, skipped runners, refusals.
    const replays = orders.reduce((n, op) => n + Math.max(0, op.answers.filter((a) => a.status === 201).length - 1), 0);
    const revoked = rows.filter((r) => (r.status === 'refunded' || r.status === 'chargedback') && entitlementOf.has(r.id)).length;
    expect(replays).toBeGreaterThan(0);
    expect(entitlements.length).toBeGreaterThan(OPERATIONS / 100);
    expect(revoked).toBeGreaterThan(0);
    expect(answered.filter((a) => a.route === 'ack' && a.reply.status === 200).length).toBeGreaterThan(0);
    const refunded = [...store.txns.values()].filter((t) => REFUNDED_AT_STORE.has(t.status) || t.status === 'Chargedback').length;
    reportFigure(
      `commerce jepsen seed ${seed}: ${OPERATIONS} operations by ${CLIENTS} clients in ${elapsed} ms (${answered.length} answers); ${rows.length} orders (${replays} replays), ` +
        `(${answered.filter((a) => a.reply.body?.error === 'order-in-progress').length} order-in-progress, ${answered.filter((a) => a.reply.body?.error === 'already-active').length} already-active), ` +
        `${entitlements.length} granted, ${revoked} revoked of ${refunded} taken back at the store, ${shortfalls.length} shortfalls, ${spent} spends, ${[...potionsUsed.values()].reduce((a, b) => a + b, 0)} potions and ${charmsUsed.size} charms used, ${store.count('FinalizeTxn')} FinalizeTxn, ` +
        `${answerLost.size} FinalizeTxn answers lost, ${quietRounds} quiet rounds, ${ticks.filter((t) => t === 'skipped').length} of ${ticks.length} runner ticks skipped`,
    );
  });
});
