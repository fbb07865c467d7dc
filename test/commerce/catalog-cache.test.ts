/**
 * GET /commerce/catalog from memory (docs/commerce.md "The catalog from memory"): the environment's
 * products on sale are kept per `products` content version and priced per request, so a product change
 * is seen at once: announced, by the very next read; committed by a process without Redis, within
 * moments (PostgreSQL's NOTIFY), never a cache lifetime later. The player's own part (wallet currency,
 * entitlements held) is kept per player the same way: this process's own writes drop it at once, and
 * anyone's write is heard from the tables' trigger.
 */
import { randomUUID } from 'node:crypto';
import { COMMERCE_PLAYER_CHANNEL } from '@hearth/core/content';
import { applyManifests, removeManifest, validateManifest, type AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { StoreStandIn } from '../support/store-standin';
import { eventually } from '../support/wait';
import { NAMESPACE } from '../support/manifests';
import { STORE_KEY, STORE_KEY_VARIABLE, authorize, commerceManifests, identifiedBuyer, newBuyer, order, product } from './helpers';

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

const gems = (amount: number, extra: Record<string, unknown> = {}) =>
  product('gems', {
    environment: 'shop-live',
    sku: 'gems-100',
    name: '100 gems',
    storeItemId: 2,
    entitlement: 'gems-100',
    repeatable: true,
    prices: [{ currency: 'USD', amount }],
    ...extra,
  });

/** Commits manifests the way a process without Redis does: announced to nobody (only PostgreSQL's NOTIFY tells). */
async function applyUnannounced(docs: AnyManifest[]): Promise<void> {
  await applyManifests(
    h.db,
    docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `quiet#${i + 1}`), origin: `quiet#${i + 1}` })),
  );
}

/**
 * Every notice PostgreSQL sent this process's watch before now has been heard: notices reach a
 * listener in commit order, so once one sent now is heard, any committed earlier has been too.
 */
async function noticesHeard(): Promise<void> {
  const marker = `barrier-${randomUUID()}`;
  let heard = false;
  const stop = h.core.bus.on((event) => {
    if (event.kind === 'commerce-player' && event.playerId === marker) heard = true;
  });
  try {
    await h.db.raw('SELECT pg_notify(?, ?)', [COMMERCE_PLAYER_CHANNEL, marker]);
    await eventually(async () => heard, 5_000, 5);
  } finally {
    stop();
  }
}

async function skusAndPrices(token: string): Promise<Record<string, number>> {
  const reply = await call(h.base, 'GET', '/commerce/catalog', { token });
  expect(reply.status).toBe(200);
  return Object.fromEntries(reply.body.products.map((p: { sku: string; amount: number }) => [p.sku, p.amount]));
}

test('served from memory: a row changed behind the content version is not seen until the version moves', async () => {
  const buyer = await newBuyer(h);
  expect((await skusAndPrices(buyer.token))['gems-100']).toBe(99);
  const env = await h.db('environments').where({ name: 'shop-live' }).first('id');
  // Not how products change (no version bump, no notice): only to show the answer does not come from the table.
  await h
    .db('commerce_products')
    .where({ environment_id: env.id, sku: 'gems-100' })
    .update({ definition: h.db.raw(`jsonb_set(definition, '{prices,0,amount}', '7')`) });
  expect((await skusAndPrices(buyer.token))['gems-100']).toBe(99);
  await applyUnannounced([gems(99)]); // the document as it was: it rewrites the row and moves the version
  await eventually(async () => (await skusAndPrices(buyer.token))['gems-100'] === 99, 5_000);
});

test('an announced change is seen by the next read: a new price, a product switched off, a new one, one deleted', async () => {
  const buyer = await newBuyer(h);
  expect(await skusAndPrices(buyer.token)).toEqual({ 'gem-bundle': 199, 'gems-100': 99, 'starter-pack': 499 });

  await h.apply([gems(149)]);
  expect((await skusAndPrices(buyer.token))['gems-100']).toBe(149);

  await h.apply([
    gems(149, { enabled: false }),
    product('fresh', { environment: 'shop-live', sku: 'fresh', name: 'Fresh', storeItemId: 9, entitlement: 'fresh', prices: [{ currency: 'USD', amount: 5 }] }),
  ]);
  expect(await skusAndPrices(buyer.token)).toEqual({ 'gem-bundle': 199, fresh: 5, 'starter-pack': 499 });

  await removeManifest(h.db, { kind: 'Product', namespace: NAMESPACE, name: 'fresh' }, h.core.bus);
  await h.apply([gems(99)]);
  expect(await skusAndPrices(buyer.token)).toEqual({ 'gem-bundle': 199, 'gems-100': 99, 'starter-pack': 499 });
});

test('a change committed without Redis is heard from PostgreSQL within moments', async () => {
  const buyer = await newBuyer(h);
  expect((await skusAndPrices(buyer.token))['gems-100']).toBe(99);
  await applyUnannounced([gems(129)]);
  const heardInMs = await eventually(async () => (await skusAndPrices(buyer.token))['gems-100'] === 129, 5_000);
  expect(heardInMs).toBeLessThan(5_000); // the snapshot's lifetime is 30 s
  await applyUnannounced([gems(99)]);
  await eventually(async () => (await skusAndPrices(buyer.token))['gems-100'] === 99, 5_000);
});

test("the player's part: this process's own writes are seen by the holder's next read, and by nobody else's", async () => {
  const usd = await newBuyer(h);
  const eur = await identifiedBuyer(h, store, { currency: 'EUR' });
  // Read in turns, each warming what the other reads.
  expect(await skusAndPrices(usd.token)).toEqual({ 'gem-bundle': 199, 'gems-100': 99, 'starter-pack': 499 });
  expect(await skusAndPrices(eur.token)).toEqual({ 'starter-pack': 449 });
  expect(await skusAndPrices(usd.token)).toEqual({ 'gem-bundle': 199, 'gems-100': 99, 'starter-pack': 499 });
  // An entitlement given is seen on the holder's next read only.
  const made = await order(h, eur);
  store.authorize(made.body.storeOrderId, true);
  expect((await authorize(h, eur, made.body.storeOrderId)).body.order.status).toBe('completed');
  const held = await call(h.base, 'GET', '/commerce/catalog', { token: eur.token });
  expect(held.body.products).toEqual([expect.objectContaining({ sku: 'starter-pack', active: true })]);
  const other = await call(h.base, 'GET', '/commerce/catalog', { token: usd.token });
  expect(other.body.products.find((p: { sku: string }) => p.sku === 'starter-pack').active).toBe(false);
});

test("the player's part comes from memory: a write that no trigger tells is not seen; a write anyone makes is, within moments", async () => {
  const buyer = await identifiedBuyer(h, store, { currency: 'EUR' });
  const activeOf = async () =>
    (await call(h.base, 'GET', '/commerce/catalog', { token: buyer.token })).body.products.find((p: { sku: string }) => p.sku === 'starter-pack')
      .active as boolean;
  expect(await activeOf()).toBe(false);
  const made = await order(h, buyer);
  store.authorize(made.body.storeOrderId, true);
  expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');
  expect(await activeOf()).toBe(true);

  // Not how entitlements change (triggers off for this transaction: no notice): only to show the answer does not come from the table.
  await h.db.transaction(async (trx) => {
    await trx.raw('SET LOCAL session_replication_role = replica');
    await trx('commerce_entitlements').where({ player_id: buyer.id }).update({ status: 'revoked' });
  });
  await noticesHeard();
  expect(await activeOf()).toBe(true);

  // A write from outside this process's services (another process, the report job, psql): the trigger's notice drops the copy.
  await h.db('commerce_entitlements').where({ player_id: buyer.id }).update({ status: 'active' });
  await h.db('commerce_entitlements').where({ player_id: buyer.id }).update({ status: 'revoked' });
  const heardInMs = await eventually(async () => (await activeOf()) === false, 5_000);
  expect(heardInMs).toBeLessThan(5_000); // the copy's lifetime is 60 s
  // And the wallet: a currency changed at the store account is heard the same way.
  await h.db('commerce_store_accounts').where({ player_id: buyer.id }).update({ currency: 'USD' });
  await eventually(
    async () => JSON.stringify(await skusAndPrices(buyer.token)) === JSON.stringify({ 'gem-bundle': 199, 'gems-100': 99, 'starter-pack': 499 }),
    5_000,
  );
});

test('the hot path reads no database once warm (the first read of a player reads their part)', async () => {
  const buyer = await identifiedBuyer(h, store, { currency: 'EUR' });
  let statements = 0;
  const count = () => statements++;
  h.db.on('query', count);
  try {
    await skusAndPrices(buyer.token);
    expect(statements).toBeGreaterThan(0);
    statements = 0;
    for (let i = 0; i < 20; i++) await skusAndPrices(buyer.token);
  } finally {
    h.db.off('query', count);
  }
  expect(statements).toBe(0);
});
