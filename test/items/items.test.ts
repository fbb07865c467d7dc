/**
 * Items players hold (spec §4 Game services "Items", §3 consumed items), over real HTTP: the lists,
 * grants (grantKey, data, maxOwned, inventory choice), consumptions, use and opening, every refusal
 * the spec names for them, and the concurrency that must never double, lose or pass a limit.
 */
import { removeManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { itemType, realm, standardManifests } from '../support/manifests';

const env = 'alpha-live';
const type = (name: string, spec: Record<string, unknown>) => itemType(name, { environment: env, name, category: 'misc', ownership: 'one-by-one', ...spec });
const container = (name: string, contents: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
  type(name, { category: 'container', contents: { grants: [], picks: [], ...contents }, ...spec });

const content = [
  realm('permanent', { environment: env, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  type('sword', { usable: true, maxOwned: 3, requires: ['chapter.1'] }),
  type('gem', { ownership: 'counted', usable: true, maxOwned: 50 }),
  type('shard', { ownership: 'counted' }),
  type('relic', {}),
  type('badge', { scope: 'realm' }),
  type('off', { usable: true, enabled: false }),
  type('offstack', { ownership: 'counted', usable: true, enabled: false }),
  container('chest', {
    grants: [{ itemTypeKey: 'gem', quantity: 2 }],
    picks: [
      {
        count: 2,
        from: [
          { itemTypeKey: 'relic', weight: 1 },
          { itemTypeKey: 'shard', quantity: 5, weight: 1 },
        ],
      },
    ],
  }),
  container('badchest', { grants: [{ itemTypeKey: 'gem', quantity: 1 }], picks: [{ count: 1, from: [{ itemTypeKey: 'ghost', weight: 1 }] }] }),
  container('offchest', { grants: [{ itemTypeKey: 'off', quantity: 1 }] }),
  container('lockedchest', { grants: [{ itemTypeKey: 'gem', quantity: 1 }] }, { requires: ['vault', 'chapter.1'] }),
  container('limitchest', {
    grants: [
      { itemTypeKey: 'gem', quantity: 1 },
      { itemTypeKey: 'sword', quantity: 4 },
    ],
  }),
  container(
    'realmchest',
    {
      grants: [
        { itemTypeKey: 'gem', quantity: 1 },
        { itemTypeKey: 'badge', quantity: 1 },
      ],
    },
    { scope: 'realm' },
  ),
  container('dice', {
    picks: [
      {
        count: 2,
        from: [
          { itemTypeKey: 'relic', weight: 1 },
          { itemTypeKey: 'shard', quantity: 5, weight: 3 },
        ],
      },
    ],
  }),
  container('offbox', { grants: [{ itemTypeKey: 'gem', quantity: 1 }] }, { enabled: false }),
  type('lonely', { environment: 'alpha-test', scope: 'realm' }),
];

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `i-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...content] });
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
  test('a counted type grows its stack (quantity default 1); the stacks list holds it with the inventory', async () => {
    const p = await player('grant-counted');
    const first = ok(await grant(p, { itemTypeKey: 'gem', quantity: 5 }));
    expect(first).toEqual({
      inventoryId: expect.any(String),
      itemTypeKey: 'gem',
      stack: { itemTypeKey: 'gem', quantity: 5 },
      items: [],
      alreadyGranted: false,
    });
    expect(ok(await grant(p, { itemTypeKey: 'gem' })).stack).toEqual({ itemTypeKey: 'gem', quantity: 6 });
    ok(await grant(p, { itemTypeKey: 'shard', quantity: 1000 }));
    const list = await stacks(p);
    expect(list).toEqual({
      items: [
        { itemTypeKey: 'gem', quantity: 6 },
        { itemTypeKey: 'shard', quantity: 1000 },
      ],
      next: null,
      inventory: { id: first.inventoryId, realmId: null },
    });
    // A player's token reads its own.
    const token = (await signIn(h.base, key, 'grant-counted')).accessToken;
    expect((await stacks('me', 'account', token)).items).toHaveLength(2);
    expectError(await call(h.base, 'GET', `/players/${p}/inventories/account/item-stacks`, { token }), 403, 'forbidden');
  });

  test('a one-by-one type makes `quantity` items with their data; the items list pages them in the order granted', async () => {
    const p = await player('grant-items');
    const made = ok(await grant(p, { itemTypeKey: 'relic', quantity: 3, data: { level: 2, tags: ['a'] } }));
    expect(made.stack).toBeNull();
    expect(made.alreadyGranted).toBe(false);
    expect(made.items).toHaveLength(3);
    for (const item of made.items) {
      expect(item).toEqual({
        id: expect.any(String),
        inventoryId: made.inventoryId,
        itemTypeKey: 'relic',
        grantKey: null,
        consumedAt: null,
        data: { level: 2, tags: ['a'] },
      });
    }
    const plain = ok(await grant(p, { itemTypeKey: 'relic' })).items[0];
    expect(plain.data).toEqual({});
    const all = await items(p);
    expect(all.items.map((i: { id: string }) => i.id)).toEqual([...made.items.map((i: { id: string }) => i.id), plain.id]);
    expect(all.inventory).toEqual({ id: made.inventoryId, realmId: null });
    const page1 = await items(p, 'account', '?limit=3');
    expect(page1.items).toHaveLength(3);
    const page2 = await items(p, made.inventoryId, `?limit=3&cursor=${encodeURIComponent(page1.next)}`);
    expect(page2).toEqual({ items: [plain], next: null, inventory: { id: made.inventoryId, realmId: null } });
    // A cursor is bound to its inventory.
    const realmInventory = ok(await call(h.base, 'GET', `/players/${p}/inventories/current`, { token: key }));
    expectError(
      await call(h.base, 'GET', `/players/${p}/inventories/current/items?cursor=${encodeURIComponent(page1.next)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
    expect(realmInventory.realmId).toBe('s1');
  });

  test('a grantKey grants once: granting again answers the first grant with alreadyGranted: true, even after it was consumed', async () => {
    const p = await player('grant-keyed');
    const first = ok(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1', data: { v: 1 } }));
    expect(first.items[0]).toMatchObject({ grantKey: 'quest.1', data: { v: 1 } });
    const again = ok(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1', data: { v: 2 }, realmId: null }));
    expect(again).toEqual({ ...first, alreadyGranted: true });
    ok(await post(`/players/${p}/items/${first.items[0].id}/consume`));
    const later = ok(await grant(p, { itemTypeKey: 'relic', grantKey: 'quest.1' }));
    expect(later.alreadyGranted).toBe(true);
    expect(later.items[0]).toMatchObject({ id: first.items[0].id, consumedAt: expect.any(String) });
    // The key is per item type: another type takes the same key.
    expect(ok(await grant(p, { itemTypeKey: 'sword', grantKey: 'quest.1' })).alreadyGranted).toBe(false);
    // Parallel first grants under one key: one item.
    const racing = await Promise.all(Array.from({ length: 6 }, () => grant(p, { itemTypeKey: 'relic', grantKey: 'race' })));
    const answers = racing.map(ok);
    expect(new Set(answers.map((a) => a.items[0].id)).size).toBe(1);
    expect(answers.filter((a) => !a.alreadyGranted)).toHaveLength(1);
    const { rows } = await h.db.raw("SELECT count(*)::int AS n FROM items WHERE player_id = ? AND grant_key = 'race'", [p]);
    expect(rows[0].n).toBe(1);
  });

  test('refusals: grantKey or data on a counted type, grantKey with quantity > 1, data over 1 KB, quantity out of range, unknown type, switched off, owned-limit', async () => {
    const p = await player('grant-refusals');
    expectError(await grant(p, { itemTypeKey: 'gem', grantKey: 'k' }), 400, 'invalid-request', 'body.grantKey');
    expectError(await grant(p, { itemTypeKey: 'gem', data: { a: 1 } }), 400, 'invalid-request', 'body.data');
    expectError(await grant(p, { itemTypeKey: 'relic', grantKey: 'k', quantity: 2 }), 400, 'invalid-request', 'body.quantity');
    const big = { text: 'x'.repeat(1024 - '{"text":""}'.length) };
    ok(await grant(p, { itemTypeKey: 'relic', data: big }));
    expectError(await grant(p, { itemTypeKey: 'relic', data: { ...big, text: big.text + 'é' } }), 400, 'invalid-request', 'body.data');
    expectError(await grant(p, { itemTypeKey: 'relic', quantity: 0 }), 400, 'invalid-request', 'body.quantity');
    expectError(await grant(p, { itemTypeKey: 'relic', quantity: 1001 }), 400, 'invalid-request', 'body.quantity');
    expectError(await grant(p, { itemTypeKey: 'relic', data: [1] }), 400, 'invalid-request', 'body.data');
    expectError(await grant(p, { itemTypeKey: 'ghost' }), 404, 'not-found');
    expectError(await grant('nobody', { itemTypeKey: 'relic' }), 404, 'not-found');
    expect(expectError(await grant(p, { itemTypeKey: 'off' }), 409, 'disabled').details).toEqual({ itemTypeKey: 'off' });

    // maxOwned counts the items not consumed.
    const two = ok(await grant(p, { itemTypeKey: 'sword', quantity: 2 }));
    const refused = expectError(await grant(p, { itemTypeKey: 'sword', quantity: 2 }), 409, 'owned-limit');
    expect(refused.details).toEqual({ itemTypeKey: 'sword', held: 2, requested: 2, limit: 3 });
    ok(await post(`/players/${p}/items/${two.items[0].id}/consume`));
    ok(await grant(p, { itemTypeKey: 'sword', quantity: 2 }));
    expect((await items(p)).items.filter((i: { itemTypeKey: string }) => i.itemTypeKey === 'sword')).toHaveLength(3);
    // ...and a stack's quantity.
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 50 }));
    expect(expectError(await grant(p, { itemTypeKey: 'gem' }), 409, 'owned-limit').details).toEqual({ itemTypeKey: 'gem', held: 50, requested: 1, limit: 50 });
    expect(await stackOf(p, 'gem')).toBe(50);
    // A stack made by the refused grant itself is not kept.
    const fresh = await player('grant-fresh-limit');
    expect(expectError(await grant(fresh, { itemTypeKey: 'gem', quantity: 51 }), 409, 'owned-limit').details).toEqual({
      itemTypeKey: 'gem',
      held: 0,
      requested: 51,
      limit: 50,
    });
    expect((await stacks(fresh, 'account')).items).toEqual([]);
  });

  test('a stack with no maxOwned stops at 2^53-1: owned-limit past it, nothing changed', async () => {
    const p = await player('grant-ceiling');
    const account = ok(await grant(p, { itemTypeKey: 'shard' })).inventoryId;
    // Near the ceiling of exact numbers (put there directly: a test cannot grant 2^53 times).
    await h
      .db('item_stacks')
      .where({ inventory_id: account, item_type_key: 'shard' })
      .update({ quantity: (2n ** 53n - 2n).toString() });
    expect(expectError(await grant(p, { itemTypeKey: 'shard', quantity: 2 }), 409, 'owned-limit').details).toEqual({
      itemTypeKey: 'shard',
      held: 2 ** 53 - 2,
      requested: 2,
      limit: Number.MAX_SAFE_INTEGER,
    });
    expect(await stackOf(p, 'shard')).toBe(2 ** 53 - 2);
    expect(ok(await grant(p, { itemTypeKey: 'shard' })).stack).toEqual({ itemTypeKey: 'shard', quantity: Number.MAX_SAFE_INTEGER });
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

  test('choosing an inventory: the type scope decides; realmId / inventoryId must fit it; no-current-realm without an open realm', async () => {
    const p = await player('grant-where');
    const badge = ok(await grant(p, { itemTypeKey: 'badge' }));
    const current = ok(await call(h.base, 'GET', `/players/${p}/inventories/current`, { token: key }));
    expect(badge.inventoryId).toBe(current.id);
    expect(ok(await grant(p, { itemTypeKey: 'badge', realmId: 'permanent' })).inventoryId).not.toBe(current.id);
    expectError(await grant(p, { itemTypeKey: 'badge', realmId: null }), 400, 'invalid-request', 'body.realmId');
    expectError(await grant(p, { itemTypeKey: 'relic', realmId: 's1' }), 400, 'invalid-request', 'body.realmId');
    expectError(await grant(p, { itemTypeKey: 'relic', inventoryId: current.id }), 400, 'invalid-request', 'body.inventoryId');
    expectError(await grant(p, { itemTypeKey: 'relic', inventoryId: current.id, realmId: null }), 400, 'invalid-request', 'body.realmId');
    expectError(await grant(p, { itemTypeKey: 'badge', realmId: 'nowhere' }), 404, 'not-found');
    const other = await player('grant-where-other');
    const theirs = ok(await grant(other, { itemTypeKey: 'relic' }));
    expectError(await grant(p, { itemTypeKey: 'relic', inventoryId: theirs.inventoryId }), 404, 'not-found');
    const account = ok(await grant(p, { itemTypeKey: 'relic', realmId: null }));
    expect(ok(await grant(p, { itemTypeKey: 'relic', inventoryId: account.inventoryId })).inventoryId).toBe(account.inventoryId);
    // alpha-test has no realm open.
    const testKey = h.serverKeys['alpha-test-key'];
    const q = (await signIn(h.base, testKey, 'realmless')).player.id;
    expectError(await post(`/players/${q}/items/grant`, { itemTypeKey: 'lonely' }, { token: testKey }), 409, 'no-current-realm');
    expectError(await call(h.base, 'GET', `/players/${q}/inventories/current/items`, { token: testKey }), 409, 'no-current-realm');
    expectError(await call(h.base, 'GET', `/players/${q}/inventories/nope/item-stacks`, { token: testKey }), 404, 'not-found');
  });
});

describe('consumptions', () => {
  test('an item is consumed once (already-consumed after), leaves the items list, and is the player’s own', async () => {
    const p = await player('consume-item');
    const [item] = ok(await grant(p, { itemTypeKey: 'relic' })).items;
    const done = ok(await post(`/players/${p}/items/${item.id}/consume`));
    expect(done).toEqual({ item: { ...item, consumedAt: expect.any(String) } });
    expect(Date.parse(done.item.consumedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(expectError(await post(`/players/${p}/items/${item.id}/consume`), 409, 'already-consumed').details).toEqual({ itemTypeKey: 'relic' });
    expect((await items(p)).items).toEqual([]);
    const other = await player('consume-item-other');
    const [theirs] = ok(await grant(other, { itemTypeKey: 'relic' })).items;
    expectError(await post(`/players/${p}/items/${theirs.id}/consume`), 404, 'not-found');
    expectError(await post(`/players/${p}/items/nothing/consume`), 404, 'not-found');
    expectError(await post(`/players/${p}/items/${item.id}/consume`, undefined, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
    const token = (await signIn(h.base, key, 'consume-item-other')).accessToken;
    expectError(await post(`/players/me/items/${theirs.id}/consume`, undefined, { token }), 403, 'forbidden');
    // A retry of the consumption answers the first, not already-consumed.
    const idem = newKey();
    const [next] = ok(await grant(p, { itemTypeKey: 'relic' })).items;
    const a = ok(await post(`/players/${p}/items/${next.id}/consume`, undefined, { idem }));
    expect(ok(await post(`/players/${p}/items/${next.id}/consume`, undefined, { idem }))).toEqual(a);
  });

  test('a stack gives what it holds and no more (insufficient-balance with held and requested)', async () => {
    const p = await player('consume-stack');
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 8 }));
    expect(ok(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 3 }))).toEqual({ stack: { itemTypeKey: 'gem', quantity: 5 } });
    expect(ok(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem' }))).toEqual({ stack: { itemTypeKey: 'gem', quantity: 4 } });
    expect(expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 5 }), 409, 'insufficient-balance').details).toEqual({
      itemTypeKey: 'gem',
      held: 4,
      requested: 5,
    });
    expect(expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'shard' }), 409, 'insufficient-balance').details).toEqual({
      itemTypeKey: 'shard',
      held: 0,
      requested: 1,
    });
    expect(ok(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 4 }))).toEqual({ stack: { itemTypeKey: 'gem', quantity: 0 } });
    // An empty stack is not listed.
    expect((await stacks(p)).items).toEqual([]);
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'relic' }), 400, 'invalid-request', 'body.itemTypeKey');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'ghost' }), 404, 'not-found');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem', quantity: 1001 }), 400, 'invalid-request', 'body.quantity');
    expectError(await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'gem' }, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
  });
});

describe('use', () => {
  test('an item of a usable type is used once, with its unlocks (locked lists the missing ones), by either credential', async () => {
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
    // A switched-off type: granted before it was switched off, then not used.
    const [off] = ok(await grant(p, { itemTypeKey: 'sword' })).items;
    await h.db('item_types').where({ key: 'sword' }).update({ enabled: false });
    try {
      expectError(await post(`/players/${p}/items/${off.id}/use`), 409, 'disabled');
    } finally {
      await h.db('item_types').where({ key: 'sword' }).update({ enabled: true });
    }
    expectError(await post(`/players/${p}/items/nothing/use`), 404, 'not-found');
    // Nothing refused was consumed.
    expect((await items(p)).items.map((i: { id: string }) => i.id)).toEqual([relic.id, off.id]);
    // An optional Idempotency-Key: the retry answers the first use.
    const idem = newKey();
    const first = ok(await post(`/players/${p}/items/${off.id}/use`, undefined, { idem }));
    expect(ok(await post(`/players/${p}/items/${off.id}/use`, undefined, { idem }))).toEqual(first);
  });

  test('a stack is used one at a time: insufficient-balance when empty, not-usable, disabled, locked, one-by-one types refused', async () => {
    const p = await player('use-stack');
    const token = (await signIn(h.base, key, 'use-stack')).accessToken;
    ok(await grant(p, { itemTypeKey: 'gem', quantity: 2 }));
    expect(ok(await post('/players/me/item-stacks/use', { itemTypeKey: 'gem' }, { token, idem: null }))).toEqual({ itemTypeKey: 'gem', item: null });
    expect(await stackOf(p, 'gem')).toBe(1);
    // A retried key uses one, not two.
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
    await h
      .db('item_types')
      .where({ key: 'gem' })
      .update({ requires: JSON.stringify(['gem.license']) });
    try {
      ok(await grant(p, { itemTypeKey: 'gem' }));
      expect(expectError(await post(`/players/${p}/item-stacks/use`, { itemTypeKey: 'gem' }), 409, 'locked').details).toEqual({
        itemTypeKey: 'gem',
        missing: ['gem.license'],
      });
      expect(await stackOf(p, 'gem')).toBe(1);
    } finally {
      await h
        .db('item_types')
        .where({ key: 'gem' })
        .update({ requires: JSON.stringify([]) });
    }
  });
});

describe('open', () => {
  test('a container opens once and gives its fixed grants and its weighted picks, in the same transaction', async () => {
    const p = await player('open-chest');
    const token = (await signIn(h.base, key, 'open-chest')).accessToken;
    const [chest] = ok(await grant(p, { itemTypeKey: 'chest' })).items;
    const opened = ok(await post(`/players/me/items/${chest.id}/open`, undefined, { token, idem: null }));
    expect(opened.itemTypeKey).toBe('chest');
    expect(opened.item).toEqual({ ...chest, consumedAt: expect.any(String) });
    const byType = Object.fromEntries(opened.granted.map((g: { itemTypeKey: string }) => [g.itemTypeKey, g]));
    expect(opened.granted.map((g: { itemTypeKey: string }) => g.itemTypeKey)).toEqual(Object.keys(byType).sort());
    expect(byType.gem).toEqual({ inventoryId: chest.inventoryId, itemTypeKey: 'gem', stack: { itemTypeKey: 'gem', quantity: 2 }, items: [] });
    const relics = byType.relic?.items.length ?? 0;
    const shards = byType.shard?.stack.quantity ?? 0;
    expect(relics + shards / 5).toBe(2);
    expect(await stackOf(p, 'gem')).toBe(2);
    expect(await stackOf(p, 'shard')).toBe(shards);
    expect((await items(p)).items.map((i: { itemTypeKey: string }) => i.itemTypeKey)).toEqual(Array(relics).fill('relic'));
    expectError(await post(`/players/${p}/items/${chest.id}/open`), 409, 'already-consumed');
    expectError(await post(`/players/${p}/items/${chest.id}/open`, undefined, { token }), 403, 'forbidden');
    expectError(await post(`/players/${p}/items/nothing/open`), 404, 'not-found');
  });

  test('the picks follow their weights', async () => {
    // 60 boxes, 120 draws at 1:3: relics come up 30 times on average (sd 4.7); outside 10-50 only if the draw ignores the weights.
    const p = await player('open-many');
    const granted = ok(await grant(p, { itemTypeKey: 'dice', quantity: 60 })).items as { id: string }[];
    let relics = 0;
    for (const chest of granted) {
      const opened = ok(await post(`/players/${p}/items/${chest.id}/open`));
      relics += opened.granted.find((g: { itemTypeKey: string }) => g.itemTypeKey === 'relic')?.items.length ?? 0;
    }
    expect(relics).toBeGreaterThan(10);
    expect(relics).toBeLessThan(50);
    expect(await stackOf(p, 'shard')).toBe((120 - relics) * 5);
  });

  test('refusals consume nothing: not a container, contents naming a missing or switched-off type, locked, switched off, owned-limit', async () => {
    const p = await player('open-refusals');
    const one = async (itemTypeKey: string) => ok(await grant(p, { itemTypeKey })).items[0] as { id: string };
    const relic = await one('relic');
    expect(expectError(await post(`/players/${p}/items/${relic.id}/open`), 409, 'not-usable').details).toEqual({ itemTypeKey: 'relic' });
    const bad = await one('badchest');
    expect(expectError(await post(`/players/${p}/items/${bad.id}/open`), 409, 'not-usable').details).toEqual({ itemTypeKey: 'ghost' });
    const off = await one('offchest');
    expect(expectError(await post(`/players/${p}/items/${off.id}/open`), 409, 'not-usable').details).toEqual({ itemTypeKey: 'off' });
    const locked = await one('lockedchest');
    expect(expectError(await post(`/players/${p}/items/${locked.id}/open`), 409, 'locked').details).toEqual({
      itemTypeKey: 'lockedchest',
      missing: ['vault', 'chapter.1'],
    });
    await unlock(p, 'chapter.1');
    expect(expectError(await post(`/players/${p}/items/${locked.id}/open`), 409, 'locked').details.missing).toEqual(['vault']);
    const limit = await one('limitchest');
    expect(expectError(await post(`/players/${p}/items/${limit.id}/open`), 409, 'owned-limit').details).toMatchObject({
      itemTypeKey: 'sword',
      held: 0,
      requested: 4,
    });
    // Nothing granted, nothing consumed: every container is still held, and the limit chest's gem never came.
    expect((await items(p)).items.map((i: { id: string }) => i.id)).toEqual([relic.id, bad.id, off.id, locked.id, limit.id]);
    expect((await stacks(p)).items).toEqual([]);
    // Once the vault is unlocked it opens.
    await unlock(p, 'vault');
    ok(await post(`/players/${p}/items/${locked.id}/open`));
  });

  test('a switched-off container is not opened (disabled)', async () => {
    const p = await player('open-disabled');
    await h.db('item_types').where({ key: 'offbox' }).update({ enabled: true });
    const [box] = ok(await grant(p, { itemTypeKey: 'offbox' })).items;
    await h.db('item_types').where({ key: 'offbox' }).update({ enabled: false });
    expect(expectError(await post(`/players/${p}/items/${box.id}/open`), 409, 'disabled').details).toEqual({ itemTypeKey: 'offbox' });
    expect((await items(p)).items).toHaveLength(1);
  });

  test('contents go into the container’s inventory when their scope allows it, else where their scope puts them', async () => {
    const p = await player('open-realm');
    const [chest] = ok(await grant(p, { itemTypeKey: 'realmchest', realmId: 'permanent' })).items;
    const opened = ok(await post(`/players/${p}/items/${chest.id}/open`));
    const account = ok(await call(h.base, 'GET', `/players/${p}/inventories/account`, { token: key }));
    expect(opened.granted.map((g: { itemTypeKey: string; inventoryId: string }) => [g.itemTypeKey, g.inventoryId])).toEqual([
      ['badge', chest.inventoryId],
      ['gem', account.id],
    ]);
    expect((await items(p, chest.inventoryId)).items.map((i: { itemTypeKey: string }) => i.itemTypeKey)).toEqual(['badge']);
  });
});

describe('definitions and players', () => {
  test('deleting an item type leaves the items held; deleting the player removes them', async () => {
    await h.apply([type('fleeting', { ownership: 'counted' }), type('fleeting-one', {})]);
    const p = await player('held-after-delete');
    ok(await grant(p, { itemTypeKey: 'fleeting', quantity: 4 }));
    const [one] = ok(await grant(p, { itemTypeKey: 'fleeting-one' })).items;
    await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'fleeting' }, h.core.bus);
    await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'fleeting-one' }, h.core.bus);
    expect(await stackOf(p, 'fleeting')).toBe(4);
    expect((await items(p)).items).toEqual([one]);
    // An item of a deleted type is not used, but the server may still take it.
    expectError(await post(`/players/${p}/items/${one.id}/use`), 409, 'not-usable');
    ok(await post(`/players/${p}/items/${one.id}/consume`));
    expect((await call(h.base, 'DELETE', `/players/${p}`, { token: key })).status).toBe(204);
    const left = await h.db.raw(
      `SELECT (SELECT count(*) FROM items WHERE player_id = ?)::int AS items,
              (SELECT count(*) FROM item_stacks s JOIN inventories i ON i.id = s.inventory_id WHERE i.player_id = ?)::int AS stacks`,
      [p, p],
    );
    expect(left.rows[0]).toEqual({ items: 0, stacks: 0 });
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
