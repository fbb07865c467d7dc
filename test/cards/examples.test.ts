/**
 * The dev examples' cards (examples/dev/30-cards.yaml, what `hearth dev` applies) make a playable set:
 * applied as `hearth apply` applies them, a player earns gold, buys an archer, and builds a deck that
 * validates with the starter squires nobody had to grant.
 */
import path from 'node:path';
import { applyManifests, loadManifests } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, signIn } from '../support/http';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({ manifests: [] });
  const results = await applyManifests(h.db, loadManifests(path.join(__dirname, '..', '..', 'examples', 'dev')), h.core.bus);
  key = results.find((r) => r.kind === 'ServerKey' && r.name === 'game-servers')!.serverKey!.key;
});
afterAll(async () => {
  await h.close();
});

const ok = <T = any>(reply: Reply<T>, status = 200): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body: expect.anything() });
  return reply.body;
};

test('the demo’s card types and template are served, and a player buys a card and builds a valid deck with starters', async () => {
  const types = ok(await call(h.base, 'GET', '/definitions/card-types', { token: key }));
  expect(types.items.map((t: any) => [t.key, t.enabled, t.starter, t.purchasable])).toEqual([
    ['archer', true, false, true],
    ['dragon', true, false, true],
    ['jester', false, false, false],
    ['squire', true, true, false],
  ]);
  expect(ok(await call(h.base, 'GET', '/definitions/card-templates', { token: key })).items.map((t: any) => t.key)).toEqual(['foil']);

  const signed = await signIn(h.base, key, 'demo-card-player');
  const me = signed.accessToken;
  ok(
    await call(h.base, 'POST', `/players/${signed.player.id}/currencies/gold/credit`, {
      token: key,
      body: { amount: 120, reason: 'quest' },
      headers: { 'Idempotency-Key': 'demo-gold' },
    }),
  );
  const bought = ok(await call(h.base, 'POST', '/players/me/purchases/cards', { token: me, body: { cardTypeKey: 'archer' } }));
  expect(bought.charges.map((c: any) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['gold', -50, 70]]);
  const deck = ok(
    await call(h.base, 'POST', '/players/me/decks', { token: me, body: { inventoryId: bought.granted.card.inventoryId, name: 'Starter deck' } }),
    201,
  );
  ok(await call(h.base, 'PUT', `/players/me/decks/${deck.id}/cards/${bought.granted.card.id}`, { token: me }));
  ok(await call(h.base, 'PUT', `/players/me/decks/${deck.id}/types/squire`, { token: me, body: { count: 4 } }));
  expect(ok(await call(h.base, 'GET', `/players/me/decks/${deck.id}/validation?maxSize=30`, { token: me }))).toEqual({ valid: true, size: 5, problems: [] });
  // A fifth squire passes the type's perDeckLimit of 4.
  ok(await call(h.base, 'PUT', `/players/me/decks/${deck.id}/types/squire`, { token: me, body: { count: 5 } }));
  expect(ok(await call(h.base, 'GET', `/players/me/decks/${deck.id}/validation`, { token: me })).problems.map((p: any) => p.code)).toEqual(['per-type-limit']);
});
