/**
 * The ItemType kind and GET /definitions/item-types (spec §2 item type definition, §4 Definitions):
 * applied, applied again (unchanged, no version move), updated, refused (naming the field, changing
 * nothing), its identity (key, environment) kept, removed; the definitions page with every field, switched-off ones listed,
 * deleted ones gone in every API process; the route's refusals. The definitions are read through
 * each process's cache of committed rows, so these run over HTTP on committed manifests; what the kind
 * refuses is held on core in test/items/rules.test.ts.
 */
import { type AnyManifest, removeManifest } from '@hearth/core/manifests';
import { ITEM_TYPES_CONTENT } from '@hearth/core/items';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { itemType, projectWithout, standardManifests } from '../support/manifests';
import { chestDoc, swordDoc } from '../support/fixtures/items';
import { contentVersion, manifestRefusal, reconcileDocument } from '../support/reconcile';

let h: Harness;
let key: string;

const potion = itemType('potion', { environment: 'alpha-live', name: 'Potion', category: 'consumable', ownership: 'counted', usable: true, enabled: false });

const reconcile = (doc: AnyManifest) => reconcileDocument(h.db, h.core.bus, doc);
const version = (environmentName = 'alpha-live') => contentVersion(h.db, ITEM_TYPES_CONTENT, environmentName);
async function definitions(base = h.base, query = '', token = key) {
  const reply = await call(base, 'GET', `/definitions/item-types${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: Record<string, any>[]; next: string | null };
}

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('noinv', 'inventory'), swordDoc(), chestDoc(), potion] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

describe('GET /definitions/item-types', () => {
  test('every item type by key, each field present with its default, switched-off ones listed with enabled: false; the switches also under `switches` (spec §2)', async () => {
    expect(await definitions()).toEqual({
      items: [
        {
          key: 'chest.wood',
          name: 'Wooden chest',
          description: 'Opens for a few things',
          icon: 'https://cdn.example.com/chest.png',
          category: 'container',
          ownership: 'one-by-one',
          scope: 'realm',
          switches: { enabled: true, usable: false, purchasable: true },
          enabled: true,
          usable: false,
          purchasable: true,
          maxOwned: 5,
          priceRule: 'any',
          prices: [
            { currencyKey: 'gold', amount: 100 },
            { currencyKey: 'gems', amount: 1_000_000_000 },
          ],
          data: { rarity: 'common' },
          contents: {
            grants: [{ itemTypeKey: 'potion', quantity: 2 }],
            picks: [
              {
                count: 2,
                from: [
                  { itemTypeKey: 'sword', quantity: 1, weight: 9 },
                  { itemTypeKey: 'potion', quantity: 5, weight: 1 },
                ],
              },
            ],
          },
          requires: ['chapter.1', 'shop:open'],
        },
        {
          key: 'potion',
          name: 'Potion',
          description: '',
          icon: null,
          category: 'consumable',
          ownership: 'counted',
          scope: 'account',
          switches: { enabled: false, usable: true, purchasable: false },
          enabled: false,
          usable: true,
          purchasable: false,
          maxOwned: null,
          priceRule: 'all',
          prices: [],
          data: {},
          contents: null,
          requires: [],
        },
        {
          key: 'sword',
          name: 'Sword',
          description: '',
          icon: null,
          category: 'weapon',
          ownership: 'one-by-one',
          scope: 'account',
          switches: { enabled: true, usable: false, purchasable: false },
          enabled: true,
          usable: false,
          purchasable: false,
          maxOwned: null,
          priceRule: 'all',
          prices: [],
          data: {},
          contents: null,
          requires: [],
        },
      ],
      next: null,
    });
  });

  test('pages by key; a cursor of another environment is refused', async () => {
    const first = await definitions(h.base, '?limit=2');
    expect(first.items.map((d) => d.key)).toEqual(['chest.wood', 'potion']);
    const rest = await definitions(h.base, `?limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(rest.items.map((d) => d.key)).toEqual(['sword']);
    expect(rest.next).toBeNull();
    expectError(
      await call(h.base, 'GET', `/definitions/item-types?cursor=${encodeURIComponent(first.next!)}`, { token: h.serverKeys['alpha-test-key'] }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test('a conditional read: the same ETag while the item types stay as they are, 304 for it, a new one after a change', async () => {
    const first = await call(h.base, 'GET', '/definitions/item-types', { token: key });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"t\d+-.+"$/);
    const again = await call(h.base, 'GET', '/definitions/item-types', { token: key, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    // Another page is another answer, under its own tag.
    const page = await call(h.base, 'GET', '/definitions/item-types?limit=1', { token: key });
    expect(page.headers.get('etag')).not.toBe(etag);

    await reconcile(itemType('etag-gem', { environment: 'alpha-live', name: 'Gem', category: 'misc', ownership: 'counted' }));
    const changed = await call(h.base, 'GET', '/definitions/item-types', { token: key, headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(changed.body.items.map((d: { key: string }) => d.key)).toContain('etag-gem');
    expect((await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'etag-gem' }, h.core.bus)).action).toBe('removed');
    const back = await call(h.base, 'GET', '/definitions/item-types', { token: key });
    expect(back.body.items.map((d: { key: string }) => d.key)).not.toContain('etag-gem');
    expect(back.headers.get('etag')).not.toBe(etag); // the version moved on: never back to an old tag
  });

  test("another environment's item types are not listed", async () => {
    expect(await definitions(h.base, '', h.serverKeys['alpha-test-key'])).toEqual({ items: [], next: null });
  });

  test('refusals: a player token is forbidden, no credential unauthorized, the inventory service off is service-disabled, an unknown query is invalid', async () => {
    const p = await signIn(h.base, key, 'def-reader');
    expectError(await call(h.base, 'GET', '/definitions/item-types', { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/definitions/item-types'), 401, 'unauthorized');
    expectError(await call(h.base, 'GET', '/definitions/item-types', { token: h.serverKeys['noinv-live-key'] }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/definitions/item-types?enabled=true', { token: key }), 400, 'invalid-request', 'query.enabled');
    expectError(await call(h.base, 'GET', '/definitions/item-types?limit=201', { token: key }), 400, 'invalid-request', 'query.limit');
  });
});

describe('the ItemType kind', () => {
  test('applied again: unchanged, no version move; a change updates it in place and every process sees it at once', async () => {
    const other = await h.startAnotherApi();
    expect((await definitions(other.base)).items.find((d) => d.key === 'sword')!.name).toBe('Sword'); // cached there now
    const before = await version();
    const rowBefore = await h.db('item_types').where({ key: 'sword' }).first('updated_at');
    expect((await reconcile(swordDoc())).action).toBe('unchanged');
    expect((await reconcile(chestDoc())).action).toBe('unchanged');
    expect(await version()).toBe(before);

    expect((await reconcile(swordDoc({ name: 'Long sword', maxOwned: 3 }))).action).toBe('updated');
    expect(await version()).toBe(before + 1);
    expect((await h.db('item_types').where({ key: 'sword' }).first('updated_at')).updated_at.getTime()).toBeGreaterThan(rowBefore.updated_at.getTime());
    for (const base of [h.base, other.base]) {
      expect((await definitions(base)).items.find((d) => d.key === 'sword')).toMatchObject({ name: 'Long sword', maxOwned: 3 });
    }
    // Switched off: still listed, enabled: false.
    expect((await reconcile(swordDoc({ name: 'Long sword', maxOwned: 3, enabled: false }))).action).toBe('updated');
    expect((await definitions(other.base)).items.find((d) => d.key === 'sword')!.enabled).toBe(false);
    await reconcile(swordDoc());
  });

  test('its key and environment are its identity: a change is refused (changing nothing); deleted and created again, it moves and leaves no row behind', async () => {
    const doc = (spec: Record<string, unknown>) => itemType('mover', { name: 'Mover', category: 'misc', ownership: 'counted', ...spec });
    expect((await reconcile(doc({ environment: 'alpha-live', key: 'mover.a' }))).action).toBe('created');
    const versionBefore = await version();
    for (const [changed, field, was] of [
      [doc({ environment: 'alpha-live', key: 'mover.b' }), 'spec.key', '"mover.a"'],
      [doc({ environment: 'alpha-test', key: 'mover.a' }), 'spec.environment', '"alpha-live"'],
    ] as const) {
      const err = await manifestRefusal(() => reconcile(changed));
      expect({ field: err.field, code: err.code }).toEqual({ field, code: 'invalid-request' });
      expect(err.reason).toBe(`is immutable: it names an identity; delete the resource and create it again to change it on purpose (it is ${was})`);
    }
    expect(await version()).toBe(versionBefore);
    expect((await definitions()).items.map((d) => d.key)).toContain('mover.a');

    // The deliberate move: the document deleted, then created with the new key in another environment.
    expect((await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'mover' }, h.core.bus)).action).toBe('removed');
    const testVersion = await version('alpha-test');
    expect((await reconcile(doc({ environment: 'alpha-test', key: 'mover.b' }))).action).toBe('created');
    expect(await version('alpha-test')).toBe(testVersion + 1);
    expect((await definitions()).items.map((d) => d.key)).not.toContain('mover.a');
    expect((await definitions(h.base, '', h.serverKeys['alpha-test-key'])).items.map((d) => d.key)).toEqual(['mover.b']);
    expect((await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'mover' }, h.core.bus)).action).toBe('removed');
  });

  test('removed: the definition vanishes from every process; removing again is absent', async () => {
    const other = await h.startAnotherApi();
    expect((await reconcile(itemType('gone', { environment: 'alpha-live', name: 'Gone', category: 'misc', ownership: 'counted' }))).action).toBe('created');
    expect((await definitions(other.base)).items.map((d) => d.key)).toContain('gone');
    const before = await version();
    expect((await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'gone' }, h.core.bus)).action).toBe('removed');
    expect(await version()).toBe(before + 1);
    for (const base of [h.base, other.base]) expect((await definitions(base)).items.map((d) => d.key)).not.toContain('gone');
    expect((await removeManifest(h.db, { kind: 'ItemType', namespace: 'tests', name: 'gone' }, h.core.bus)).action).toBe('absent');
  });
});
