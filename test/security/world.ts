/**
 * The world the authorization attacks run in (test/security/api1, api2, api3, api5): one environment
 * (`alpha-live`) with a victim who owns one of everything a route can name by id, an attacker of the
 * same environment, and two foreign environments (`alpha-test`, a sibling of the same project, and
 * `rival-live`, another project's) each with its own server key and player.
 *
 * `snapshot` reads everything the victim owns through the API with the victim's own credentials, so
 * an attack test compares it before and after: "nothing changed" is checked, not assumed.
 */
import { routeTable, type AnyRoute } from '@hearth/api';
import { NAMESPACE as TESTS_NAMESPACE } from '../support/manifests';
import { mintLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { parseTrustedProxies } from '@hearth/core/net';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn, type Reply } from '../support/http';
import {
  blogCategory,
  blogPost,
  cardType,
  currency,
  environment,
  gameConfig,
  itemType,
  legalDocument,
  project,
  serverKey,
  skillTree,
  standardManifests,
  tour,
} from '../support/manifests';

export const ROUTES: AnyRoute[] = routeTable();
export const routeName = (r: Pick<AnyRoute, 'method' | 'path'>) => `${r.method} ${r.path}`;
export const pathParams = (r: Pick<AnyRoute, 'path'>) => [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

/**
 * The products every project's licence key covers here: the samples' (samples.ts) and the attack
 * suites' own. Both projects' keys name the same products, so what keeps one project's licence
 * tokens from the other's plugin is the token's audience, not the product name.
 */
export const LICENCE_PRODUCTS = ['sec-plugin', 'p'];

/** One player of one environment, with the server key of that environment and the licence key of its project. */
export interface Actor {
  env: string;
  key: string;
  /** A licence key of the environment's project (the licence routes' credential). */
  licence: string;
  id: string;
  token: string;
  refresh: string;
}

export interface World {
  h: Harness;
  /** The whole licence keys minted for the projects (alpha, rival), by project. */
  licenceKeys: Record<string, string>;
  victim: Actor;
  /** Seated in the victim's session (the target kick/promote name). */
  mate: Actor;
  /** Same environment as the victim, owns nothing of the victim's. */
  attacker: Actor;
  /** alpha-test (same project) and rival-live (another project). */
  foreign: Actor[];
  /** The victim's things, by what the path parameter names. */
  ids: {
    grantId: string;
    sessionId: string;
    itemId: string;
    chestId: string;
    inventoryId: string;
    cardId: string;
    deckId: string;
    saveKey: string;
    unlockKey: string;
    currencyKey: string;
    tourId: string;
    tableKey: string;
    slug: string;
  };
  snapshot(): Promise<Record<string, unknown>>;
  /** The same reads for any player (and a session of theirs when given). */
  snapshotOf(who: Actor, sessionId?: string): Promise<Record<string, unknown>>;
  /** A new player of an environment (default alpha-live), for attacks that need one of their own. */
  newActor(env?: string, subject?: string): Promise<Actor>;
}

/** A request with an Idempotency-Key (the currency moves require one). */
export const idem = () => ({ 'Idempotency-Key': `sec-${Math.random().toString(36).slice(2)}-${Date.now()}` });

export async function startWorld(): Promise<World> {
  const h = await startHarness({
    // Attacks that send many refused credentials come from addresses of their own (X-Forwarded-For),
    // so the per-address limit, which counts requests without a good credential, does not end them.
    trustedProxies: parseTrustedProxies('loopback'),
    manifests: [
      // Seats enough for every sample of the licence routes (each takes or frees one seat).
      ...standardManifests({ licenceSeats: 100 }),
      project('rival'),
      environment('rival-live', 'rival'),
      serverKey('rival-live-key', 'rival-live'),
      currency('sec-gems', { environment: 'alpha-live', name: 'Gems', scope: 'account', kind: 'balance' }),
      currency('sec-energy', { environment: 'alpha-live', name: 'Energy', scope: 'account', kind: 'consumed' }),
      itemType('sec-relic', { environment: 'alpha-live', name: 'Relic', category: 'misc', ownership: 'one-by-one', usable: true }),
      itemType('sec-stack', { environment: 'alpha-live', name: 'Stack', category: 'misc', ownership: 'counted', usable: true }),
      itemType('sec-chest', {
        environment: 'alpha-live',
        name: 'Chest',
        category: 'container',
        ownership: 'one-by-one',
        contents: { grants: [{ itemTypeKey: 'sec-stack', quantity: 1 }] },
      }),
      itemType('sec-potion', {
        environment: 'alpha-live',
        name: 'Potion',
        category: 'misc',
        ownership: 'counted',
        purchasable: true,
        prices: [{ currencyKey: 'sec-gems', amount: 1 }],
      }),
      cardType('sec-card', { environment: 'alpha-live', name: 'Card', purchasable: true, prices: [{ currencyKey: 'sec-gems', amount: 1 }] }),
      skillTree('sec-tree', { environment: 'alpha-live', name: 'Secret skills', hidden: true, nodes: [{ key: 'sec-node', name: 'Secret node' }] }),
      tour('sec-tour', { environment: 'alpha-live', name: 'Welcome' }),
      legalDocument('sec-terms', { environment: 'alpha-live', title: 'Terms', url: 'https://example.com/terms', version: '1', required: true }),
      blogCategory('sec-news', { environment: 'alpha-live', name: 'News' }),
      blogPost('sec-post', {
        environment: 'alpha-live',
        title: 'Only for alpha-live',
        content: { blocks: [{ type: 'paragraph', text: 'secret body' }] },
        category: 'sec-news',
        status: 'published',
      }),
      gameConfig('sec-config', {
        environment: 'alpha-live',
        values: [],
        flags: [],
        tables: [
          { key: 'sec-table', name: 'Secret table', columns: [{ key: 'a', label: 'A', type: 'string' }], rows: [{ key: 'r1', cells: { a: 'alpha only' } }] },
        ],
      }),
    ],
  });
  const licenceKeys: Record<string, string> = {};
  for (const projectName of ['alpha', 'rival']) {
    const organisation = await organisationNamed(h.db, TESTS_NAMESPACE, projectName);
    licenceKeys[projectName] = (await mintLicenceKey(h.db, organisation!.id, `${projectName}-plugin`, LICENCE_PRODUCTS)).key;
  }
  const actor = async (env: string, subject: string): Promise<Actor> => {
    const key = h.serverKeys[`${env}-key`];
    const t = await signIn(h.base, key, subject, subject);
    return { env, key, licence: licenceKeys[env.split('-')[0]], id: t.player.id, token: t.accessToken, refresh: t.refreshToken };
  };
  const victim = await actor('alpha-live', 'victim');
  const mate = await actor('alpha-live', 'mate');
  const attacker = await actor('alpha-live', 'attacker');
  const foreign = [await actor('alpha-test', 'foreigner'), await actor('rival-live', 'rival')];

  const must = (reply: Reply, ...ok: number[]) => {
    if (!ok.includes(reply.status)) throw new Error(`world setup: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  const vk = victim.key;
  const vp = `/players/${victim.id}`;
  must(await call(h.base, 'PUT', `/players/me/data/slot`, { token: victim.token, body: { data: { gold: 42 } } }), 201);
  must(await call(h.base, 'PUT', `${vp}/unlocks/chapter.1`, { token: vk, body: { source: 'quest' } }), 201);
  must(await call(h.base, 'POST', `${vp}/currencies/sec-gems/credit`, { token: vk, headers: idem(), body: { amount: 100, reason: 'setup' } }), 200);
  const relic = must(await call(h.base, 'POST', `${vp}/items/grant`, { token: vk, headers: idem(), body: { itemTypeKey: 'sec-relic' } }), 200);
  must(await call(h.base, 'POST', `${vp}/items/grant`, { token: vk, headers: idem(), body: { itemTypeKey: 'sec-stack', quantity: 5 } }), 200);
  const chest = must(await call(h.base, 'POST', `${vp}/items/grant`, { token: vk, headers: idem(), body: { itemTypeKey: 'sec-chest' } }), 200);
  const account = must(await call(h.base, 'GET', `${vp}/inventories/account`, { token: vk }), 200);
  // Cards on the account (no realm is open here): one held by id, a stack, and a deck holding the card.
  const card = must(await call(h.base, 'POST', `${vp}/cards/grant`, { token: vk, body: { cardTypeKey: 'sec-card', realmId: null } }), 200);
  must(
    await call(h.base, 'POST', `${vp}/card-stacks/grant`, { token: vk, headers: idem(), body: { cardTypeKey: 'sec-card', quantity: 3, realmId: null } }),
    200,
  );
  const deck = must(await call(h.base, 'POST', `${vp}/decks`, { token: vk, body: { inventoryId: account.id, name: 'Victim deck' } }), 201);
  must(await call(h.base, 'PUT', `${vp}/decks/${deck.id}/cards/${card.card.id}`, { token: vk }), 200);
  const session = must(await call(h.base, 'POST', '/sessions', { token: victim.token, body: { gameMode: 'duel', map: 'harbor' } }), 201);
  must(await call(h.base, 'POST', `/sessions/${session.sessionId ?? session.id}/join`, { token: mate.token, body: {} }), 200);

  // A completed store order of the victim's and the grant it gave (no store here: its rows as commerce keeps them).
  const alphaLive = (await h.core.environments.byAppKey('alpha-live'))!.id;
  await h.db('commerce_orders').insert({
    id: `sec-order-${victim.id}`,
    environment_id: alphaLive,
    player_id: victim.id,
    provider: 'steam',
    store_order_id: '9007199254740993',
    store_id: '76561197960287930',
    sku: 'sec-product',
    currency: 'USD',
    amount: 99,
    language: 'en',
    status: 'completed',
  });
  await h.db('commerce_entitlements').insert({
    id: `sec-grant-${victim.id}`,
    environment_id: alphaLive,
    player_id: victim.id,
    key: 'sec-product',
    sku: 'sec-product',
    order_id: `sec-order-${victim.id}`,
  });

  const ids = {
    grantId: `sec-grant-${victim.id}`,
    sessionId: session.sessionId ?? session.id,
    itemId: relic.items?.[0]?.id ?? relic.item?.id,
    chestId: chest.items?.[0]?.id ?? chest.item?.id,
    inventoryId: account.id ?? account.inventoryId,
    cardId: card.card?.id,
    deckId: deck.id,
    saveKey: 'slot',
    unlockKey: 'chapter.1',
    currencyKey: 'sec-gems',
    tourId: 'sec-tour',
    tableKey: 'sec-table',
    slug: 'sec-post',
  };
  for (const [k, v] of Object.entries(ids))
    if (typeof v !== 'string') throw new Error(`world setup: no ${k} in ${JSON.stringify({ relic, account, session })}`);

  const snapshotOf = async (who: Actor, sessionId?: string) => {
    const vp = `/players/${who.id}`;
    const read = async (path: string, token = who.key) => {
      const r = await call(h.base, 'GET', path, { token });
      return { status: r.status, body: r.body };
    };
    return {
      player: await read(vp),
      saves: await read(`${vp}/data`),
      save: await read(`${vp}/data/slot`),
      unlocks: await read(`${vp}/unlocks`),
      balances: await read(`${vp}/inventories/account/balances`),
      items: await read(`${vp}/inventories/account/items`),
      stacks: await read(`${vp}/inventories/account/item-stacks`),
      cards: await read(`${vp}/inventories/account/cards`),
      cardStacks: await read(`${vp}/inventories/account/card-stacks`),
      decks: await read(`${vp}/decks`),
      ledger: await read(`${vp}/ledger`),
      legal: await read(`${vp}/legal`),
      entitlements: await read(`${vp}/entitlements`),
      grants: await read('/commerce/grants'),
      tours: await read(`/players/me/tours`, who.token),
      session: sessionId ? await read(`/sessions/${sessionId}`) : null,
      // The player's token still works: nobody signed them out.
      me: (await call(h.base, 'GET', '/players/me', { token: who.token })).status,
    };
  };
  const snapshot = () => snapshotOf(victim, ids.sessionId);
  let made = 0;
  const newActor = (env = 'alpha-live', subject = `extra-${++made}`) => actor(env, subject);
  return { h, licenceKeys, victim, mate, attacker, foreign, ids, snapshot, snapshotOf, newActor };
}
