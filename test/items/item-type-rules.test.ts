/**
 * What the ItemType kind refuses (spec §2 item type definition): each refusal names its field, and
 * none changes a row or moves the content version. Reconciled straight on core's manifests, inside a
 * transaction rolled back after each test (test/support/domain.ts). The kind applied, changed and
 * removed, and GET /definitions/item-types, which reads each process's cache of committed rows, are
 * held over HTTP in test/items/item-types.test.ts.
 */
import { type AnyManifest, ManifestError, reconcileManifest, validateManifest } from '@hearth/core/manifests';
import { ITEM_TYPES_CONTENT } from '@hearth/core/items';
import { domainSuite } from '../support/domain';
import { itemType, standardManifests } from '../support/manifests';

const sword = (spec: Record<string, unknown> = {}) =>
  itemType('sword', { environment: 'alpha-live', name: 'Sword', category: 'weapon', ownership: 'one-by-one', ...spec });
const chest = (spec: Record<string, unknown> = {}) =>
  itemType('chest', {
    environment: 'alpha-live',
    key: 'chest.wood',
    name: 'Wooden chest',
    description: 'Opens for a few things',
    icon: 'https://cdn.example.com/chest.png',
    category: 'container',
    ownership: 'one-by-one',
    scope: 'realm',
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
            { itemTypeKey: 'sword', weight: 9 },
            { itemTypeKey: 'potion', quantity: 5, weight: 1 },
          ],
        },
      ],
    },
    requires: ['chapter.1', 'shop:open'],
    ...spec,
  });
const potion = itemType('potion', { environment: 'alpha-live', name: 'Potion', category: 'consumable', ownership: 'counted', usable: true, enabled: false });

const suite = domainSuite({ manifests: [...standardManifests(), sword(), chest(), potion] });

async function version(): Promise<number> {
  const row = await suite
    .db('content_versions as v')
    .join('environments as e', 'e.id', 'v.environment_id')
    .where({ 'e.name': 'alpha-live', 'v.kind': ITEM_TYPES_CONTENT })
    .first('v.version');
  return row ? Number(row.version) : 0;
}

/** Reconciles each document, expecting each refused on its field with its reason; then nothing has changed. */
async function expectRefused(cases: [AnyManifest, string, RegExp][]) {
  const rowsBefore = await suite.db('item_types').orderBy('key').select('key', 'name', 'updated_at');
  const versionBefore = await version();
  for (const [doc, field, reason] of cases) {
    // Validated and reconciled as `hearth apply` does: a refusal of either rejects.
    const err = await (async () => reconcileManifest(suite.db, validateManifest(JSON.parse(JSON.stringify(doc)), 'test'), suite.core.bus))().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ManifestError);
    expect({ doc: doc.metadata.name, field: (err as ManifestError).field }).toEqual({ doc: doc.metadata.name, field });
    expect((err as ManifestError).reason).toMatch(reason);
  }
  expect(await suite.db('item_types').orderBy('key').select('key', 'name', 'updated_at')).toEqual(rowsBefore);
  expect(await version()).toBe(versionBefore);
}

test('what the schema refuses names the field and changes nothing', async () => {
  await expectRefused([
    [sword({ contents: { grants: [{ itemTypeKey: 'potion' }] } }), 'spec.contents', /only for an item type of category container/],
    [chest({ contents: undefined }), 'spec.contents', /required for a container/],
    [chest({ contents: {} }), 'spec.contents', /at least one grant or pick/],
    [chest({ ownership: 'counted' }), 'spec.ownership', /one-by-one for a container/],
    [chest({ usable: true }), 'spec.usable', /opened rather than used/],
    [sword({ priceRule: 'any' }), 'spec.priceRule', /any needs at least one price/],
    [sword({ purchasable: true }), 'spec.prices', /at least one price/],
    [
      sword({
        prices: [
          { currencyKey: 'gold', amount: 1 },
          { currencyKey: 'gold', amount: 2 },
        ],
      }),
      'spec.prices',
      /each currency once/,
    ],
    [sword({ requires: ['a', 'b', 'a'] }), 'spec.requires', /each unlock once/],
    [sword({ prices: [{ currencyKey: 'gold', amount: 0 }] }), 'spec.prices.0.amount', /must be >= 1/],
    [sword({ prices: [{ currencyKey: 'gold', amount: 1_000_000_001 }] }), 'spec.prices.0.amount', /must be <= 1000000000/],
    [sword({ prices: Array.from({ length: 11 }, (_, i) => ({ currencyKey: `c${i}`, amount: 1 })) }), 'spec.prices', /must NOT have more than 10 items/],
    [sword({ ownership: 'unique' }), 'spec.ownership', /one of "one-by-one", "counted"/],
    [sword({ scope: 'guild' }), 'spec.scope', /one of "account", "realm"/],
    [sword({ key: '-sword' }), 'spec.key', /must match pattern/],
    [sword({ maxOwned: 0 }), 'spec.maxOwned', /must be >= 1/],
    [chest({ contents: { picks: [{ count: 11, from: [{ itemTypeKey: 'sword' }] }] } }), 'spec.contents.picks.0.count', /must be <= 10/],
    [chest({ contents: { picks: [{ count: 1, from: [] }] } }), 'spec.contents.picks.0.from', /must NOT have fewer than 1 items/],
    [chest({ contents: { grants: [{ itemTypeKey: 'potion', quantity: 1001 }] } }), 'spec.contents.grants.0.quantity', /must be <= 1000/],
    [sword({ colour: 'red' }), 'spec.colour', /is not taken here/],
  ]);
});

test('what the domain refuses beyond the schema (data over 1 KB, a key of another document, a name that is no key, an unknown environment) names the field and changes nothing', async () => {
  await expectRefused([
    [sword({ data: { text: 'x'.repeat(1020) } }), 'spec.data', /1031 bytes written compactly; at most 1024/],
    [
      itemType('sword-2', { environment: 'alpha-live', key: 'sword', name: 'Another', category: 'weapon', ownership: 'counted' }),
      'spec.key',
      /already belongs to ItemType tests\/sword/,
    ],
    [itemType('a'.repeat(129), { environment: 'alpha-live', name: 'Long', category: 'weapon', ownership: 'counted' }), 'spec.key', /is not an item type key/],
    [itemType('nowhere', { environment: 'no-such-env', name: 'N', category: 'weapon', ownership: 'counted' }), 'spec.environment', /does not exist/],
  ]);
});
