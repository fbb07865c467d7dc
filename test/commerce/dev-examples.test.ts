/**
 * The dev examples' commerce (examples/dev, what `hearth dev` applies; docs/commerce.md opens with its
 * walk-through): the demo project sells through the local store `hearth dev` runs, with its publisher
 * key in HEARTH_DEV_STORE_KEY (dev sets it). Applied without that variable, as here, the catalog still
 * lists the demo's products, and every route that would ask the store answers 503 `unavailable`,
 * saying no store is set up, without calling anything.
 */
import path from 'node:path';
import { applyManifests, loadManifests } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';

let h: Harness;
let key: string;

beforeAll(async () => {
  delete process.env.HEARTH_DEV_STORE_KEY;
  h = await startHarness({ manifests: [] });
  const results = await applyManifests(h.db, loadManifests(path.join(__dirname, '..', '..', 'examples', 'dev')), h.core.bus);
  key = results.find((r) => r.kind === 'ServerKey' && r.name === 'game-servers')!.serverKey!.key;
});
afterAll(async () => {
  await h.close();
});

test("the demo's products are listed, priced in USD before identify", async () => {
  const player = await signIn(h.base, key, 'demo-shopper');
  const reply = await call(h.base, 'GET', '/commerce/catalog', { token: player.accessToken });
  expect(reply.status).toBe(200);
  expect(reply.body.products).toEqual([
    { sku: 'gold-pack', name: 'Pouch of gold', description: '1,000 gold', currency: 'USD', amount: 99, repeatable: true, active: false },
    {
      sku: 'starter-bundle',
      name: 'Starter bundle',
      description: '500 gold and 5 health potions, once',
      currency: 'USD',
      amount: 499,
      repeatable: false,
      active: false,
    },
  ]);
});

test('without HEARTH_DEV_STORE_KEY the routes that ask the store answer unavailable, saying no store is set up', async () => {
  const player = await signIn(h.base, key, 'demo-buyer');
  const token = player.accessToken;
  const identify = await call(h.base, 'POST', '/commerce/store/identify', { token, body: { ticket: '00ff', identity: 'hearth-dev' } });
  expectError(identify, 503, 'unavailable');
  expect(identify.body.message).toBe('No store is set up for this game on this deployment: its publisher key is not configured.');
  expect(identify.body.message).not.toContain('HEARTH_DEV_STORE_KEY'); // where the key lives is the deployment's business
  // Refusals that need no store come first: an order before identify, an order that does not exist.
  expectError(
    await call(h.base, 'POST', '/commerce/orders', { token, body: { sku: 'gold-pack', provider: 'steam', language: 'en' } }),
    409,
    'no-steam-account',
  );
  expectError(await call(h.base, 'POST', '/commerce/store/authorizations', { token, body: { storeOrderId: '1', authorized: true } }), 404, 'not-found');
  // Nothing was kept of the failed identify but the attempt it counted.
  expect(await h.db('commerce_store_accounts').where({ player_id: player.player.id })).toEqual([]);
});
