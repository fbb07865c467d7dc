/**
 * Items players hold (spec §4 Game services "Items", §3 consumed items), over real HTTP: every route
 * (the lists, grants, consumptions, use and opening), the status each refusal is answered with,
 * validation by the routes' schemas, credentials and `me`, pages, Idempotency-Key replays, and the
 * concurrency that must never double, lose or pass a limit (parallel requests, so parallel
 * connections). The rules themselves (what a grant, a use or an opening refuses and that it changes
 * nothing, limits, containers' contents) are held on core's services in test/items/rules.test.ts.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { permanentAndSeason1Realms } from '../support/fixtures/economy';
import { heldItemTypes } from '../support/fixtures/items';

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `i-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...permanentAndSeason1Realms(), ...heldItemTypes()] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const post = (path: string, body?: Record<string, unknown>, opts: { token?: string; idem?: string | null } = {}) =>
  call(h.base, 'POST', path, { token: opts.token ?? key, body, headers: opts.idem === null ? {} : { 'Idempotency-Key': opts.idem ?? newKey() } });
const grant = (playerId: string, body: Record<string, unknown>, idem?: string | null) => post(`/players/${playerId}/items/grant`, body, { idem });
const ok = <T = any>(reply: Reply<T>): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.anything() });
  return reply.body;
};
const items = async (playerId: string, inventory = 'account', query = '', token = key) =>
  ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/items${query}`, { token }));
const stacks = async (playerId: string, inventory = 'account', token = key) =>
  ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/item-stacks`, { token }));
const stackOf = async (playerId: string, itemTypeKey: string, inventory = 'account') =>
  ((await stacks(playerId, inventory)).items as { itemTypeKey: string; quantity: number }[]).find((s) => s.itemTypeKey === itemTypeKey)?.quantity ?? 0;
const unlock = async (playerId: string, unlockKey: string) =>
  expect((await call(h.base, 'PUT', `/players/${playerId}/unlocks/${unlockKey}`, { token: key, body: {} })).status).toBe(201);

describe('grants', () => {
  test('a grant answers 200 with the grant; the stacks list holds it with the inventory; a player reads its own as `me` only', async () => {
    const p = await player('grant-counted');
    const first = ok(await grant(p, { itemTypeKey: 'gem', quantity: 5 }));
    expect(first).toEqual({
      inventoryId: expect.any(String),
      itemTypeKey: 'gem',
      stack: { itemTypeKey: 'gem', quantity: 5 },
      items: [],
      alreadyGranted: false,
    });
    expect(await stacks(p)).toEqual({ items: [{ itemTypeKey: 'gem', quantity: 5 }], next: null, inventory: { id: first.inventoryId, realmId: null } });
    const token = (await signIn(h.base, key, 'grant-counted')).accessToken;
    expect((await stacks('me', 'account', token)).items).toHaveLength(1);
    expectError(await call(h.base, 'GET', `/players/${p}/inventories/account/item-stacks`, { token }), 403, 'forbidden');
  });

  test('the items list pages in the order granted; a cursor is bound to its inventory (400 on query.cursor)', async () => {
    const p = await player('grant-items');
    const made = ok(await grant(p, { itemTypeKey: 'relic', quantity: 4, data: { level: 2 } }));
    const page1 = await items(p, 'account', '?limit=3');
    expect(page1.items).toEqual(made.items.slice(0, 3));
    const page2 = await items(p, made.inventoryId, `?limit=3&cursor=${encodeURIComponent(page1.next)}`);
    expect(page2).toEqual({ items: [made.items[3]], next: null, inventory: { id: made.inventoryId, realmId: null } });
    expectError(
      await call(h.base, 'GET', `/players/${p}/inventories/current/items?cursor=${encodeURIComponent(page1.next)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test('a grantKey grants once, also under parallel first grants: one item, one answer with alreadyGranted: false', async () => {
    const p = await player('grant-keyed');
    const first = ok(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1' }));
    expect(ok(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1' }))).toEqual({ ...first, alreadyGranted: true });
    const racing = await Promise.all(Array.from({ length: 6 }, () => grant(p, { itemTypeKey: 'relic', grantKey: 'race' })));
    const answers = racing.map(ok);
    expect(new Set(answers.map((a) => a.items[0].id)).size).toBe(1);
    expect(answers.filter((a) => !a.alreadyGranted)).toHaveLength(1);
    const { rows } = await h.db.raw("SELECT count(*)::int AS n FROM items WHERE player_id = ? AND grant_key = 'race'", [p]);
    expect(rows[0].n).toBe(1);
  });

  test('refusals: 400 on the body field core names or the schema refuses, 404 not-found, 409 disabled and owned-limit with details', async () => {
    const p = await player('grant-refusals');
    expectError(await grant(p, { itemTypeKey: 'gem', grantKey: 'k' }), 400, 'invalid-request', 'body.grantKey');
    expectError(await grant(p, { itemTypeKey: 'gem', data: { a: 1 } }), 400, 'invalid-request', 'body.data');
    expectError(await grant(p, { itemTypeKey: 'relic', quantity: 0 }), 400, 'invalid-request', 'body.quantity');
    expectError(await grant(p, { itemTypeKey: 'relic', quantity: 1001 }), 400, 'invalid-request', 'body.quantity');
    expectError(await grant(p, { itemTypeKey: 'relic', data: [1] }), 400, 'invalid-request', 'body.data');
    expectError(await grant(p, { itemTypeKey: 'ghost' }), 404, 'not-found');
    expectError(await grant('nobody', { itemTypeKey: 'relic' }), 404, 'not-found');
    expect(expectError(await grant(p, { itemTypeKey: 'off' }), 409, 'disabled').details).toEqual({ itemTypeKey: 'off' });
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 50 }));
    expect(expectError(await grant(p, { itemTypeKey: 'gem' }), 409, 'owned-limit').details).toEqual({ itemTypeKey: 'gem', held: 50, requested: 1, limit: 50 });
  });

  test('Idempotency-Key: required; a retry answers the first and grants nothing more; another request under it is idempotency-conflict; server key only', async () => {
    const p = await player('grant-idem');
    expectError(await grant(p, { itemTypeKey: 'gem' }, null), 400, 'invalid-request', 'header.Idempotency-Key');
    const idem = newKey();
    const first = await grant(p, { itemTypeKey: 'relic', quantity: 2 }, idem);
    const retry = await grant(p, { itemTypeKey: 'relic', quantity: 2 }, idem);
    expect(retry.body).toEqual(ok(first));
    expect(retry.headers.get('Idempotent-Replayed')).toBe('true');
    expect((await items(p)).items).toHaveLength(2);
    expectError(await grant(p, { itemTypeKey: 'relic', quantity: 3 }, idem), 409, 'idempotency-conflict');
    const token = (await signIn(h.base, key, 'grant-idem')).accessToken;
    expectError(await post('/players/me/items/grant', { itemTypeKey: 'relic' }, { token }), 403, 'forbidden');
  });

  test('choosing an inventory: a place that does not fit is 400 on body.realmId or body.inventoryId; 404 for an unknown realm; 409 no-current-realm', async () => {
    const p = await player('grant-where');
    const current = ok(await call(h.base, 'GET', `/players/${p}/inventories/current`, { token: key }));
    expectError(await grant(p, { itemTypeKey: 'badge', realmId: null }), 400, 'invalid-request', 'body.realmId');
    expectError(await grant(p, { itemTypeKey: 'relic', inventoryId: current.id }), 400, 'invalid-request', 'body.inventoryId');
    expectError(await grant(p, { itemTypeKey: 'badge', realmId: 'nowhere' }), 404, 'not-found');
    // alpha-test has no realm open.
    const testKey = h.serverKeys['alpha-test-key'];
    const q = (await signIn(h.base, testKey, 'realmless')).player.id;
    expectError(await post(`/players/${q}/items/grant`, { itemTypeKey: 'lonely' }, { token: testKey }), 409, 'no-current-realm');
    expectError(await call(h.base, 'GET', `/players/${q}/inventories/current/items`, { token: testKey }), 409, 'no-current-realm');
    expectError(await call(h.base, 'GET', `/players/${q}/inventories/nope/item-stacks`, { token: testKey }), 404, 'not-found');
  });
});

describe('consumptions', () => {
  test('consuming an item: 200 with the item, 409 already-consumed, 404 for another player’s, the key required, a player token forbidden, a retry answers the first', async () => {
    const p = await player('consume-item');
    const [item] = ok(await grant(p, { itemTypeKey: 'relic' })).items;
    expect(ok(await post(`/players/${p}/items/${item.id}/consume`))).toEqual({ item: { ...item, consumedAt: expect.any(String) } });
    expect(expectError(await post(`/players/${p}/items/${item.id}/consume`), 409, 'already-consumed').details).toEqual({ itemTypeKey: 'relic' });
    const other = await player('consume-item-other');
    const [theirs] = ok(await grant(other, { itemTypeKey: 'relic' })).items;
    expectError(await post(`/players/${p}/items/${theirs.id}/consume`), 404, 'not-found');
    expectError(await post(`/players/${p}/items/${item.id}/consume`, undefined, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
    const token = (await signIn(h.base, key, 'consume-item-other')).accessToken;
    expectError(await post(`/players/me/items/${theirs.id}/consume`, undefined, { token }), 403, 'forbidden');
    // A retry of the consumption answers the first, not already-consumed.
    const idem = newKey();
    const [next] = ok(await grant(p, { itemTypeKey: 'relic' })).items;
    const a = ok(await post(`/players/${p}/items/${next.id}/consume`, undefined, { idem }));
    expect(ok(await post(`/players/${p}/items/${next.id}/consume`, undefined, { idem }))).toEqual(a);
  });

  test('consuming from a stack: 200 with the stack, 409 insufficient-balance with details, 400 on body fields and a missing key, 404 for an unknown type', async () => {
    const p = await player('consume-stack');
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 8 }));
    expect(ok(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 3 }))).toEqual({ stack: { itemTypeKey: 'gem', quantity: 5 } });
    expect(expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 6 }), 409, 'insufficient-balance').details).toEqual({
      itemTypeKey: 'gem',
      held: 5,
      requested: 6,
    });
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'relic' }), 400, 'invalid-request', 'body.itemTypeKey');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'ghost' }), 404, 'not-found');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 1001 }), 400, 'invalid-request', 'body.quantity');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem' }, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
  });
});

describe('use', () => {
  test('using an item, by either credential: 409 locked, not-usable and already-consumed, 404, another’s player path forbidden to a token; a retried key answers the first use', async () => {
    const p = await player('use-item');
    const token = (await signIn(h.base, key, 'use-item')).accessToken;
    const [sword] = ok(await grant(p, { itemTypeKey: 'sword' })).items;
    expect(expectError(await post(`/players/me/items/${sword.id}/use`, undefined, { token, idem: null }), 409, 'locked').details).toEqual({
      itemTypeKey: 'sword',
      missing: ['chapter.1'],
    });
    await unlock(p, 'chapter.1');
    const used = ok(await post(`/players/me/items/${sword.id}/use`, undefined, { token, idem: null }));
    expect(used).toEqual({ itemTypeKey: 'sword', item: { ...sword, consumedAt: expect.any(String) } });
    expectError(await post(`/players/${p}/items/${sword.id}/use`), 409, 'already-consumed');
    expectError(await post(`/players/${p}/items/${sword.id}/use`, undefined, { token }), 403, 'forbidden');
    const [relic] = ok(await grant(p, { itemTypeKey: 'relic' })).items;
    expect(expectError(await post(`/players/${p}/items/${relic.id}/use`), 409, 'not-usable').details).toEqual({ itemTypeKey: 'relic' });
    expectError(await post(`/players/${p}/items/nothing/use`), 404, 'not-found');
    // An optional Idempotency-Key: the retry answers the first use.
    const [again] = ok(await grant(p, { itemTypeKey: 'sword' })).items;
    const idem = newKey();
    const first = ok(await post(`/players/${p}/items/${again.id}/use`, undefined, { idem }));
    expect(ok(await post(`/players/${p}/items/${again.id}/use`, undefined, { idem }))).toEqual(first);
  });

  test('using from a stack as `me`: a retried key uses one, not two; 409 insufficient-balance, not-usable and disabled; 400 on body.itemTypeKey; 404', async () => {
    const p = await player('use-stack');
    const token = (await signIn(h.base, key, 'use-stack')).accessToken;
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 2 }));
    expect(ok(await post('/players/me/item-stacks/use', { itemTypeKey: 'gem' }, { token, idem: null }))).toEqual({ itemTypeKey: 'gem', item: null });
    const idem = newKey();
    ok(await post('/players/me/item-stacks/use', { itemTypeKey: 'gem' }, { token, idem }));
    ok(await post('/players/me/item-stacks/use', { itemTypeKey: 'gem' }, { token, idem }));
    expect(await stackOf(p, 'gem')).toBe(0);
    expect(expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'gem' }), 409, 'insufficient-balance').details).toEqual({
      itemTypeKey: 'gem',
      held: 0,
      requested: 1,
    });
    ok(await grant(p, { itemTypeKey: 'shard', quantity: 1 }));
    expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'shard' }), 409, 'not-usable');
    expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'offstack' }), 409, 'disabled');
    expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'sword' }), 400, 'invalid-request', 'body.itemTypeKey');
    expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'ghost' }), 404, 'not-found');
  });
});

describe('open', () => {
  test('opening a container as `me`: 200 with what it granted; 409 already-consumed; a player path forbidden to a token; 404', async () => {
    const p = await player('open-chest');
    const token = (await signIn(h.base, key, 'open-chest')).accessToken;
    const [chest] = ok(await grant(p, { itemTypeKey: 'chest' })).items;
    const opened = ok(await post(`/players/me/items/${chest.id}/open`, undefined, { token, idem: null }));
    expect(opened).toMatchObject({ itemTypeKey: 'chest', item: { ...chest, consumedAt: expect.any(String) } });
    expect(opened.granted.find((g: { itemTypeKey: string }) => g.itemTypeKey === 'gem')).toEqual({
      inventoryId: chest.inventoryId,
      itemTypeKey: 'gem',
      stack: { itemTypeKey: 'gem', quantity: 2 },
      items: [],
    });
    expectError(await post(`/players/${p}/items/${chest.id}/open`), 409, 'already-consumed');
    expectError(await post(`/players/${p}/items/${chest.id}/open`, undefined, { token }), 403, 'forbidden');
    expectError(await post(`/players/${p}/items/nothing/open`), 404, 'not-found');
  });

  test('an opening refused is 409 not-usable, locked or owned-limit with its details, and disabled for a switched-off container', async () => {
    const p = await player('open-refusals');
    const one = async (itemTypeKey: string) => ok(await grant(p, { itemTypeKey })).items[0] as { id: string };
    expect(expectError(await post(`/players/${p}/items/${(await one('badchest')).id}/open`), 409, 'not-usable').details).toEqual({ itemTypeKey: 'ghost' });
    expect(expectError(await post(`/players/${p}/items/${(await one('lockedchest')).id}/open`), 409, 'locked').details).toEqual({
      itemTypeKey: 'lockedchest',
      missing: ['vault', 'chapter.1'],
    });
    expect(expectError(await post(`/players/${p}/items/${(await one('limitchest')).id}/open`), 409, 'owned-limit').details).toMatchObject({
      itemTypeKey: 'sword',
      held: 0,
      requested: 4,
    });
    await h.db('item_types').where({ key: 'offbox' }).update({ enabled: true });
    const box = await one('offbox');
    await h.db('item_types').where({ key: 'offbox' }).update({ enabled: false });
    expect(expectError(await post(`/players/${p}/items/${box.id}/open`), 409, 'disabled').details).toEqual({ itemTypeKey: 'offbox' });
  });
});

describe('concurrency', () => {
  test('parallel grants never pass maxOwned (items and stacks)', async () => {
    const p = await player('race-owned');
    const swords = await Promise.all(Array.from({ length: 12 }, () => grant(p, { itemTypeKey: 'sword' })));
    expect(swords.filter((r) => r.status === 200)).toHaveLength(3);
    for (const r of swords.filter((r) => r.status !== 200)) expectError(r, 409, 'owned-limit');
    const gems = await Promise.all(Array.from({ length: 12 }, () => grant(p, { itemTypeKey: 'gem', quantity: 7 })));
    expect(gems.filter((r) => r.status === 200)).toHaveLength(7);
    expect(await stackOf(p, 'gem')).toBe(49);
    const { rows } = await h.db.raw("SELECT count(*)::int AS n FROM items WHERE player_id = ? AND item_type_key = 'sword' AND consumed_at IS NULL", [p]);
    expect(rows[0].n).toBe(3);
  });

  test('parallel consumes and uses of one stack never take it below 0', async () => {
    const p = await player('race-stack');
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 10 }));
    const replies = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2 ? post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem' }) : post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'gem' }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    for (const r of replies.filter((r) => r.status !== 200)) expectError(r, 409, 'insufficient-balance');
    expect(await stackOf(p, 'gem')).toBe(0);
  });

  test('parallel opens of one container grant its contents exactly once', async () => {
    const p = await player('race-open');
    const [chest] = ok(await grant(p, { itemTypeKey: 'chest' })).items;
    const replies = await Promise.all(Array.from({ length: 8 }, () => post(`/players/${p}/items/${chest.id}/open`)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectError(r, 409, 'already-consumed');
    expect(await stackOf(p, 'gem')).toBe(2);
    const opened = replies.find((r) => r.status === 200)!.body;
    const relics = opened.granted.find((g: { itemTypeKey: string }) => g.itemTypeKey === 'relic')?.items.length ?? 0;
    expect((await items(p)).items).toHaveLength(relics);
    expect(await stackOf(p, 'shard')).toBe((2 - relics) * 5);
  });

  test('parallel retries of one Idempotency-Key act once', async () => {
    const p = await player('race-idem');
    const idem = newKey();
    const grants = await Promise.all(Array.from({ length: 6 }, () => grant(p, { itemTypeKey: 'relic', quantity: 2 }, idem)));
    const bodies = grants.map(ok);
    for (const b of bodies) expect(b).toEqual(bodies[0]);
    expect((await items(p)).items).toHaveLength(2);
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 5 }));
    const consumeKey = newKey();
    const takes = await Promise.all(
      Array.from({ length: 6 }, () => post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 2 }, { idem: consumeKey })),
    );
    for (const t of takes) expect(ok(t)).toEqual({ stack: { itemTypeKey: 'gem', quantity: 3 } });
    expect(await stackOf(p, 'gem')).toBe(3);
  });
});
