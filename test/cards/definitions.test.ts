/**
 * The CardType and CardTemplate kinds and GET /definitions/card-types, /definitions/card-templates
 * (spec §2 card type definition, card template; §4 Definitions): applied, applied again (unchanged, no
 * version move), updated and removed; the pages with every field, switched-off ones listed, deleted
 * ones gone; ETag and 304; the routes' refusals. What the kinds refuse (naming the field, changing
 * nothing) is held on core in test/cards/rules.test.ts.
 */
import { type AnyManifest, removeManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { cardTemplate, cardType, projectWithout, standardManifests } from '../support/manifests';
import { contentVersion, reconcileDocument } from '../support/reconcile';

let h: Harness;
let key: string;

const knight = (spec: Record<string, unknown> = {}) =>
  cardType('knight', {
    environment: 'alpha-live',
    slug: 'knight.blue',
    name: 'Blue knight',
    description: 'Holds the line',
    perDeckLimit: 3,
    purchasable: true,
    priceRule: 'any',
    prices: [
      { currencyKey: 'gold', amount: 100 },
      { currencyKey: 'gems', amount: 2 },
    ],
    data: { attack: 2, defence: 5 },
    ...spec,
  });
const peasant = (spec: Record<string, unknown> = {}) => cardType('peasant', { environment: 'alpha-live', name: 'Peasant', starter: true, ...spec });
const dragon = cardType('dragon', { environment: 'alpha-live', name: 'Dragon', enabled: false });
const foil = (spec: Record<string, unknown> = {}) =>
  cardTemplate('foil', { environment: 'alpha-live', name: 'Foil', description: 'Shiny', data: { finish: 'foil' }, ...spec });
const plain = cardTemplate('plain', { environment: 'alpha-live', key: 'plain.v1', name: 'Plain', enabled: false });

const reconcile = (doc: AnyManifest) => reconcileDocument(h.db, h.core.bus, doc);
const version = (kind: 'card-types' | 'card-templates', environmentName = 'alpha-live') => contentVersion(h.db, kind, environmentName);
async function definitions(path: 'card-types' | 'card-templates', query = '', token = key) {
  const reply = await call(h.base, 'GET', `/definitions/${path}${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: Record<string, any>[]; next: string | null };
}

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('nocards', 'cards'), knight(), peasant(), dragon, foil(), plain] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

describe('GET /definitions/card-types and /card-templates', () => {
  test('every definition by key with every field, defaults filled in, switched-off ones listed', async () => {
    expect(await definitions('card-types')).toEqual({
      items: [
        {
          key: 'dragon',
          slug: 'dragon',
          name: 'Dragon',
          description: '',
          enabled: false,
          perDeckLimit: null,
          starter: false,
          purchasable: false,
          priceRule: 'all',
          prices: [],
          data: {},
        },
        {
          key: 'knight.blue',
          slug: 'knight.blue',
          name: 'Blue knight',
          description: 'Holds the line',
          enabled: true,
          perDeckLimit: 3,
          starter: false,
          purchasable: true,
          priceRule: 'any',
          prices: [
            { currencyKey: 'gold', amount: 100 },
            { currencyKey: 'gems', amount: 2 },
          ],
          data: { attack: 2, defence: 5 },
        },
        {
          key: 'peasant',
          slug: 'peasant',
          name: 'Peasant',
          description: '',
          enabled: true,
          perDeckLimit: null,
          starter: true,
          purchasable: false,
          priceRule: 'all',
          prices: [],
          data: {},
        },
      ],
      next: null,
    });
    expect(await definitions('card-templates')).toEqual({
      items: [
        { key: 'foil', name: 'Foil', description: 'Shiny', enabled: true, data: { finish: 'foil' } },
        { key: 'plain.v1', name: 'Plain', description: '', enabled: false, data: {} },
      ],
      next: null,
    });
  });

  test('pages by key; a cursor of the other list or another environment is refused', async () => {
    const first = await definitions('card-types', '?limit=2');
    expect(first.items.map((d) => d.key)).toEqual(['dragon', 'knight.blue']);
    const rest = await definitions('card-types', `?limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(rest).toEqual({ items: [expect.objectContaining({ key: 'peasant' })], next: null });
    expectError(
      await call(h.base, 'GET', `/definitions/card-types?cursor=${encodeURIComponent(first.next!)}`, { token: h.serverKeys['alpha-test-key'] }),
      400,
      'invalid-request',
      'query.cursor',
    );
    expectError(
      await call(h.base, 'GET', `/definitions/card-templates?cursor=${encodeURIComponent(first.next!)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test("another environment's definitions are not listed", async () => {
    expect(await definitions('card-types', '', h.serverKeys['alpha-test-key'])).toEqual({ items: [], next: null });
    expect(await definitions('card-templates', '', h.serverKeys['alpha-test-key'])).toEqual({ items: [], next: null });
  });

  test('a conditional read: 304 while nothing changes, a new ETag after a change of that kind only', async () => {
    const types = await call(h.base, 'GET', '/definitions/card-types', { token: key });
    const templates = await call(h.base, 'GET', '/definitions/card-templates', { token: key });
    const typesTag = types.headers.get('etag')!;
    const templatesTag = templates.headers.get('etag')!;
    expect(typesTag).not.toBe(templatesTag);
    expect((await call(h.base, 'GET', '/definitions/card-types', { token: key, headers: { 'If-None-Match': typesTag } })).status).toBe(304);
    expect((await call(h.base, 'GET', '/definitions/card-types?limit=1', { token: key })).headers.get('etag')).not.toBe(typesTag);

    await reconcile(cardType('etag-imp', { environment: 'alpha-live', name: 'Imp' }));
    const changed = await call(h.base, 'GET', '/definitions/card-types', { token: key, headers: { 'If-None-Match': typesTag } });
    expect(changed.status).toBe(200);
    expect(changed.body.items.map((d: { key: string }) => d.key)).toContain('etag-imp');
    // The templates did not change: their tag stands.
    expect((await call(h.base, 'GET', '/definitions/card-templates', { token: key, headers: { 'If-None-Match': templatesTag } })).status).toBe(304);
    expect((await removeManifest(h.db, { kind: 'CardType', namespace: 'tests', name: 'etag-imp' }, h.core.bus)).action).toBe('removed');
    const back = await call(h.base, 'GET', '/definitions/card-types', { token: key });
    expect(back.body.items.map((d: { key: string }) => d.key)).not.toContain('etag-imp');
    expect(back.headers.get('etag')).not.toBe(typesTag);
  });

  test('refusals: a player token is forbidden, no credential unauthorized, the cards service off is service-disabled, an unknown query is invalid', async () => {
    const p = await signIn(h.base, key, 'card-def-reader');
    for (const path of ['/definitions/card-types', '/definitions/card-templates']) {
      expectError(await call(h.base, 'GET', path, { token: p.accessToken }), 403, 'forbidden');
      expectError(await call(h.base, 'GET', path), 401, 'unauthorized');
      expectError(await call(h.base, 'GET', path, { token: h.serverKeys['nocards-live-key'] }), 403, 'service-disabled');
      expectError(await call(h.base, 'GET', `${path}?enabled=true`, { token: key }), 400, 'invalid-request', 'query.enabled');
      expectError(await call(h.base, 'GET', `${path}?limit=0`, { token: key }), 400, 'invalid-request', 'query.limit');
    }
  });
});

describe('the CardType and CardTemplate kinds', () => {
  test('applied again: unchanged, no version move; a change updates it; removed: gone, removing again is absent', async () => {
    const types = await version('card-types');
    const templates = await version('card-templates');
    expect((await reconcile(knight())).action).toBe('unchanged');
    expect((await reconcile(foil())).action).toBe('unchanged');
    expect([await version('card-types'), await version('card-templates')]).toEqual([types, templates]);

    expect((await reconcile(knight({ perDeckLimit: 1, enabled: false }))).action).toBe('updated');
    expect(await version('card-types')).toBe(types + 1);
    expect((await definitions('card-types')).items.find((d) => d.key === 'knight.blue')).toMatchObject({ perDeckLimit: 1, enabled: false });
    await reconcile(knight());

    expect((await reconcile(foil({ enabled: false }))).action).toBe('updated');
    expect((await definitions('card-templates')).items.find((d) => d.key === 'foil')!.enabled).toBe(false);
    await reconcile(foil());

    expect((await reconcile(cardTemplate('fleeting', { environment: 'alpha-live', name: 'Fleeting' }))).action).toBe('created');
    expect((await removeManifest(h.db, { kind: 'CardTemplate', namespace: 'tests', name: 'fleeting' }, h.core.bus)).action).toBe('removed');
    expect((await definitions('card-templates')).items.map((d) => d.key)).not.toContain('fleeting');
    expect((await removeManifest(h.db, { kind: 'CardTemplate', namespace: 'tests', name: 'fleeting' }, h.core.bus)).action).toBe('absent');
  });
});
