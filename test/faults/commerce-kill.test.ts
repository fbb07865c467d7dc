/**
 * kill -9 of an API process in the middle of settling a paid order (docs/commerce.md "Exactly once",
 * docs/reliability.md "Faults: kill -9"). Real parts: the harness's database and Redis prefix, two
 * `hearth api` executables over them, and the stand-in store (test/support/store-standin.ts), which
 * keeps serving whoever called it after the caller died, as the store's servers do.
 *
 * An order is approved at the store; the player's authorization is sent to both processes at once.
 * One claims the finalize and calls FinalizeTxn; the other answers the order still awaiting the
 * player. The claimant is SIGKILLed while the store holds its FinalizeTxn, then the player's
 * reconciliation goes through the survivor. Whatever the store did with that call, the store is
 * finalized exactly once, and the order gives exactly one entitlement, one change of the grants feed,
 * and its currency and item once (the balance is checked).
 */
import { testTempDir } from '../support/temp-dir';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import type { HearthService } from '../support/hearth-process';
import { ApiProcesses, kill9 } from './api-processes';
import { eventually, sleep } from '../support/wait';
import { StoreStandIn } from '../support/store-standin';
import { STORE_KEY, STORE_KEY_VARIABLE, type Buyer, commerceManifests, identifiedBuyer } from '../commerce/helpers';

jest.setTimeout(120_000);

let h: Harness;
let store: StoreStandIn;
const apis = new ApiProcesses(() => h, testTempDir('hearth-commerce-kill-'), {
  // The project's publisherKey is `{ env: HEARTH_TEST_STORE_KEY }` (test/commerce/helpers.ts).
  [STORE_KEY_VARIABLE]: STORE_KEY,
});
const startApi = (name: string) => apis.start(name);

beforeAll(async () => {
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  h = await startHarness({ manifests: commerceManifests(store) });
});
afterAll(async () => {
  await apis.stopAll();
  await h?.close();
  await store?.stop();
});

/** What the order gave, read from the database: entitlements, feed changes, the gems ledger and the badges held. */
async function effectsOf(buyer: Buyer, orderId: string) {
  const entitlements = await h.db('commerce_entitlements').where({ order_id: orderId }).select('id', 'status');
  const changes = await h
    .db('commerce_grant_changes')
    .whereIn(
      'entitlement_id',
      entitlements.map((e: { id: string }) => e.id),
    )
    .select('change');
  const ledger = await h.db('ledger_entries').where({ player_id: buyer.id, currency_key: 'gems' }).select('amount', 'balance_after', 'reference');
  const balance = await h
    .db('balances as b')
    .join('inventories as i', 'i.id', 'b.inventory_id')
    .where({ 'i.player_id': buyer.id, 'b.currency_key': 'gems' })
    .first('b.amount');
  const badges = await h
    .db('item_stacks as s')
    .join('inventories as i', 'i.id', 's.inventory_id')
    .where({ 'i.player_id': buyer.id, 's.item_type_key': 'badge' })
    .first('s.quantity');
  return {
    entitlements: entitlements.map((e: { status: string }) => e.status),
    changes: changes.map((c: { change: string }) => c.change),
    ledger: ledger.map((e: Record<string, unknown>) => ({ amount: Number(e.amount), balanceAfter: Number(e.balance_after), reference: e.reference })),
    balance: Number(balance?.amount ?? 0),
    badges: Number(badges?.quantity ?? 0),
  };
}

/**
 * An approved order of the gem bundle (100 gems and a badge), whose authorization is sent to both
 * processes at once; answers once the store holds the claimant's FinalizeTxn, with the process that
 * sent it (still waiting) and the survivor (which answered the order still awaiting the player).
 */
async function raceToFinalize(a: { service: HearthService; base: string }, b: { service: HearthService; base: string }) {
  const buyer = await identifiedBuyer(h, store);
  const made = await call(a.base, 'POST', '/commerce/orders', { token: buyer.token, body: { sku: 'gem-bundle', provider: 'steam', language: 'en' } });
  expect(made.status).toBe(201);
  store.authorize(made.body.storeOrderId, true);
  const finalizesBefore = store.count('FinalizeTxn');
  const send = (base: string) =>
    call(base, 'POST', '/commerce/store/authorizations', { token: buyer.token, body: { storeOrderId: made.body.storeOrderId, authorized: true } }).then(
      (reply) => ({ base, reply }),
      (err: Error) => ({ base, error: err.message }),
    );
  const sent = [send(a.base), send(b.base)];
  const first = await Promise.race(sent);
  // The first to answer is the one that lost the claim: the order as it stands, not yet completed.
  expect('reply' in first && first.reply.status).toBe(200);
  expect('reply' in first && first.reply.body.order.status).toBe('awaiting-player');
  await eventually(async () => store.count('FinalizeTxn') === finalizesBefore + 1, 10_000);
  const [claimant, survivor] = first.base === a.base ? [b, a] : [a, b];
  return { buyer, order: made.body as { id: string; storeOrderId: string }, claimant, survivor, claimantAnswer: sent[first.base === a.base ? 1 : 0] };
}

test("killed while the store holds its FinalizeTxn (the store takes the money): the survivor's reconciliation grants once, without another FinalizeTxn", async () => {
  const [a, b] = await Promise.all([startApi('api-a'), startApi('api-b')]);
  store.delayNext('FinalizeTxn', 1_500);
  const { buyer, order, claimant, survivor, claimantAnswer } = await raceToFinalize(a, b);
  await kill9(claimant.service);
  expect('error' in (await claimantAnswer)).toBe(true); // its client never heard: the connection was cut
  // The store finishes the call the dead process made: the money is taken, nothing is granted yet.
  await eventually(async () => store.txnOf(order.storeOrderId).status === 'Succeeded', 5_000);
  expect((await h.db('commerce_orders').where({ id: order.id }).first('status')).status).toBe('awaiting-player');

  const settled = await call(survivor.base, 'POST', '/commerce/orders/reconcile', { token: buyer.token });
  expect(settled.status).toBe(200);
  expect(settled.body.orders).toEqual([expect.objectContaining({ id: order.id, status: 'completed' })]);
  expect(settled.body.entitlements).toHaveLength(1);
  // Asked again through either path: nothing more.
  expect(
    (await call(survivor.base, 'POST', '/commerce/store/authorizations', { token: buyer.token, body: { storeOrderId: order.storeOrderId, authorized: true } }))
      .body.order.status,
  ).toBe('completed');
  expect(store.txnOf(order.storeOrderId).finalized).toBe(1);
  expect(store.count('FinalizeTxn')).toBe(1);
  expect(await effectsOf(buyer, order.id)).toEqual({
    entitlements: ['active'],
    changes: ['granted'],
    ledger: [{ amount: 100, balanceAfter: 100, reference: order.id }],
    balance: 100,
    badges: 1,
  });
  await kill9(survivor.service);
});

test('killed before the store heard its FinalizeTxn: the claim holds until it is stale, then the survivor finalizes once and grants once', async () => {
  const [a, b] = await Promise.all([startApi('api-c'), startApi('api-d')]);
  const finalizesBefore = store.count('FinalizeTxn');
  store.failNext('FinalizeTxn', { hang: true }); // the call arrives and is never acted on nor answered
  const { buyer, order, claimant, survivor } = await raceToFinalize(a, b);
  await kill9(claimant.service);
  expect(store.txnOf(order.storeOrderId)).toMatchObject({ status: 'Approved', finalized: 0 });
  const claimedAt = new Date((await h.db('commerce_orders').where({ id: order.id }).first('finalize_claimed_at')).finalize_claimed_at).getTime();

  // While the dead process's claim is fresh, the survivor does not finalize behind it.
  const early = await call(survivor.base, 'POST', '/commerce/orders/reconcile', { token: buyer.token });
  expect(early.body.orders).toEqual([expect.objectContaining({ id: order.id, status: 'awaiting-player' })]);
  expect(store.count('FinalizeTxn')).toBe(finalizesBefore + 1);

  // Once stale (30 s, three times the store call's deadline), the next reconciliation takes it.
  let completedAt = 0;
  await eventually(
    async () => {
      const reply = await call(survivor.base, 'POST', '/commerce/orders/reconcile', { token: buyer.token });
      if (reply.body.orders[0]?.status !== 'completed') return false;
      completedAt = Date.now();
      return true;
    },
    60_000,
    1_000,
  );
  expect(completedAt - claimedAt).toBeGreaterThanOrEqual(29_000);
  await sleep(100);
  expect(store.txnOf(order.storeOrderId).finalized).toBe(1);
  expect(store.count('FinalizeTxn')).toBe(finalizesBefore + 2); // the one never acted on, and the survivor's
  expect(await effectsOf(buyer, order.id)).toEqual({
    entitlements: ['active'],
    changes: ['granted'],
    ledger: [{ amount: 100, balanceAfter: 100, reference: order.id }],
    balance: 100,
    badges: 1,
  });
});
