/**
 * A `not-found` names what it did not find (docs/api-conventions.md "A `not-found` names what it did
 * not find"): wherever the request named the missing thing (a path parameter, a query parameter, a
 * body field), the message quotes the key asked for and `details.field` names the input that held it.
 *
 * One table, over real HTTP: each row asks for something that is not there and says which field named
 * it. Which inputs must be walked comes from the route table, not from this file: every path parameter
 * of a route that may answer `not-found`, and every query or body field of such a route whose name says
 * it names something (`…Id`, `…Key`, `category`, `tag`, `sku`), is either a row here or an exception with its
 * reason (a filter that finds nothing, a key a write creates, a route of a player's own token...).
 */
import { type AnyRoute, routeTable } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, signIn } from '../support/http';
import { cardType, currency, itemType, realm, skillTree, standardManifests, tour } from '../support/manifests';

const env = 'alpha-live';
const content = [
  realm('nf-season', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  currency('nf-gems', { environment: env, key: 'gems', name: 'Gems', scope: 'account', kind: 'balance' }),
  currency('nf-coins', { environment: env, key: 'coins', name: 'Coins', scope: 'realm', kind: 'balance' }),
  currency('nf-energy', { environment: env, key: 'energy', name: 'Energy', scope: 'realm', kind: 'consumed' }),
  itemType('nf-potion', {
    environment: env,
    key: 'potion',
    name: 'Potion',
    category: 'misc',
    ownership: 'counted',
    usable: true,
    purchasable: true,
    prices: [{ currencyKey: 'gems', amount: 1 }],
  }),
  cardType('knight', { environment: env, name: 'Knight', purchasable: true, prices: [{ currencyKey: 'gems', amount: 1 }] }),
  skillTree('nf-tree', { environment: env, key: 'tree', name: 'Tree', nodes: [{ key: 'node', name: 'Node' }] }),
  tour('nf-tour', { environment: env, id: 'welcome', name: 'Welcome' }),
];

/** A name that is nowhere: each row asks for it, and the message must quote it. */
const GHOST = 'ghost-x1';

/** Inputs of not-found routes this test does not walk, and why. `*` stands for every route. */
const NOT_WALKED: Record<string, string> = {
  // Filters: an unknown value finds nothing and answers an empty page, never not-found.
  'GET /players/:playerId/ledger query.currencyKey': 'a filter',
  'GET /players/:playerId/ledger query.inventoryId': 'a filter',
  'GET /players/:playerId/decks query.inventoryId': 'a filter',
  // Keys a write makes (or a delete that is done whether or not the key held anything).
  'PUT /players/:playerId/data/:key path.key': 'a write makes the slot',
  'DELETE /players/:playerId/data/:key path.key': 'emptying a slot is done whether or not it held anything',
  'PUT /players/:playerId/unlocks/:key path.key': 'a write makes the unlock',
  'DELETE /players/:playerId/unlocks/:key path.key': 'done whether or not the player held it',
  'DELETE /players/:playerId/decks/:deckId/cards/:cardId path.cardId': 'taking a card out is done whether or not the deck held it',
  // A slot is looked up as the player's: an unknown player's slot is not found, naming path.key.
  'GET /players/:playerId/data/:key path.playerId': "the player's slot is not found (path.key)",
  'POST /players/:playerId/stats/:key/increment path.key': 'an increment makes the counter',
  'POST /stats/:key/increment path.key': 'an increment makes the counter',
  '* body.grantKey': "a grant's own key (at most one grant under it), not a name of anything",
  'POST /sessions/:sessionId/join body.uniqueNetId': 'stored with the seat, never looked up',
  // A player's own token: the path's player is the token's (`me`), another id is forbidden, not not-found.
  'POST /players/:playerId/legal/accept path.playerId': "a player's own route",
  'POST /players/:playerId/tours/:tourId/complete path.playerId': "a player's own route",
  // The session is found first; a target who holds no seat is a conflict, not a thing not found.
  'POST /sessions/:sessionId/players/:playerId/kick path.playerId': 'a target without a seat is a conflict',
  'POST /sessions/:sessionId/players/:playerId/promote path.playerId': 'a target without a seat is a conflict',
  // A deck is looked up as the player's: an unknown player's deck is not found, naming path.deckId.
  ...Object.fromEntries(
    ['GET', 'PATCH', 'DELETE']
      .map((m) => `${m} /players/:playerId/decks/:deckId`)
      .concat(['PUT /players/:playerId/decks/:deckId/cards/:cardId', 'DELETE /players/:playerId/decks/:deckId/cards/:cardId'])
      .concat(['PUT /players/:playerId/decks/:deckId/types/:cardTypeKey', 'GET /players/:playerId/decks/:deckId/validation'])
      .map((route) => [`${route} path.playerId`, "the player's deck is not found (path.deckId)"]),
  ),
  // Walked by their own area's tests, which need a store, a licence key or a dashboard's provider.
  'POST /commerce/orders body.sku': 'test/commerce/commerce.test.ts',
  'POST /commerce/store/authorizations body.storeOrderId': 'test/commerce/commerce.test.ts',
  'POST /licence/check body.machineId': 'test/licence/routes.test.ts',
  'POST /auth/dashboard body.appKey': 'test/dashboards/sign-in.test.ts',
};

/** Whether a query or body field's name says it names something that may not be there. */
const NAMES_SOMETHING = /(Id|Key)$|^(category|tag|sku)$/;

const propertiesOf = (schema: unknown): string[] => Object.keys((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});

/** Every input of a route that may answer not-found which names something: `METHOD /path part.field`. */
function inputsToWalk(routes: AnyRoute[]): string[] {
  const inputs: string[] = [];
  for (const route of routes) {
    if (!(route.refusals ?? []).includes('not-found')) continue;
    const at = `${route.method} ${route.path}`;
    for (const name of propertiesOf(route.params)) inputs.push(`${at} path.${name}`);
    for (const name of propertiesOf(route.query).filter((n) => NAMES_SOMETHING.test(n))) inputs.push(`${at} query.${name}`);
    for (const name of propertiesOf(route.body).filter((n) => NAMES_SOMETHING.test(n))) inputs.push(`${at} body.${name}`);
  }
  return inputs;
}

let h: Harness;
let key: string;
let player: { id: string; token: string };
let other: { id: string; token: string };

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...content] });
  key = h.serverKeys['alpha-live-key'];
  const signed = await signIn(h.base, key, 'nf-player');
  player = { id: signed.player.id, token: signed.accessToken };
  const second = await signIn(h.base, key, 'nf-other');
  other = { id: second.player.id, token: second.accessToken };
});
afterAll(async () => {
  await h.close();
});

interface Row {
  /** The route as the table writes it, and the input that names the missing thing. */
  route: string;
  field: string;
  /** The request: its path (with the ghost in place), body, query and credential. */
  ask: () => Promise<Reply>;
}

const asServer = (method: string, path: string, body?: unknown) => () => call(h.base, method, path, { token: key, body });
const asPlayer = (method: string, path: string, body?: unknown) => () => call(h.base, method, path, { token: player.token, body });
let seq = 0;
const keyed =
  (method: string, path: string, body: unknown, token = () => key) =>
  () =>
    call(h.base, method, path, { token: token(), body, headers: { 'Idempotency-Key': `nf-${++seq}` } });

/** A deck of the player's, made once for the rows that need one. */
let deckId: string;
const withDeck = (method: string, rest: string, body?: unknown) => async () => {
  if (deckId === undefined) {
    const inventory = (await call(h.base, 'GET', `/players/${player.id}/inventories/current`, { token: key })).body.id as string;
    deckId = (await call(h.base, 'POST', `/players/${player.id}/decks`, { token: key, body: { inventoryId: inventory, name: 'Main' } })).body.id as string;
  }
  return call(h.base, method, `/players/${player.id}/decks/${deckId}${rest}`, { token: key, body });
};

const P = () => player.id;
const rows: Row[] = [
  // Players: an id of no player of the environment.
  { route: 'GET /players/:playerId', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}`) },
  { route: 'PATCH /players/:playerId', field: 'path.playerId', ask: asServer('PATCH', `/players/${GHOST}`, { displayName: 'Ann' }) },
  { route: 'DELETE /players/:playerId', field: 'path.playerId', ask: asServer('DELETE', `/players/${GHOST}`) },
  { route: 'POST /players/:playerId/sign-out', field: 'path.playerId', ask: asServer('POST', `/players/${GHOST}/sign-out`) },
  { route: 'GET /players/:playerId/legal', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/legal`) },
  { route: 'GET /players/:playerId/legal/outstanding', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/legal/outstanding`) },
  { route: 'GET /players/:playerId/data', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/data`) },
  { route: 'GET /players/:playerId/data/:key', field: 'path.key', ask: () => call(h.base, 'GET', `/players/${P()}/data/${GHOST}`, { token: key }) },
  { route: 'PUT /players/:playerId/data/:key', field: 'path.playerId', ask: asServer('PUT', `/players/${GHOST}/data/slot`, { data: {} }) },
  { route: 'DELETE /players/:playerId/data/:key', field: 'path.playerId', ask: asServer('DELETE', `/players/${GHOST}/data/slot`) },
  { route: 'GET /players/:playerId/entitlements', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/entitlements`) },
  { route: 'GET /players/:playerId/inventories', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/inventories`) },
  { route: 'GET /players/:playerId/ledger', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/ledger`) },
  { route: 'GET /players/:playerId/unlocks', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/unlocks`) },
  { route: 'PUT /players/:playerId/unlocks/:key', field: 'path.playerId', ask: asServer('PUT', `/players/${GHOST}/unlocks/u1`, {}) },
  { route: 'DELETE /players/:playerId/unlocks/:key', field: 'path.playerId', ask: asServer('DELETE', `/players/${GHOST}/unlocks/u1`) },
  { route: 'GET /players/:playerId/xp', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/xp`) },
  { route: 'POST /players/:playerId/xp', field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/xp`, { amount: 1 }) },
  { route: 'GET /players/:playerId/skill-trees', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/skill-trees`) },
  { route: 'GET /players/:playerId/skill-trees/:treeKey', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/skill-trees/tree`) },
  {
    route: 'GET /players/:playerId/skill-trees/:treeKey',
    field: 'path.treeKey',
    ask: () => call(h.base, 'GET', `/players/${P()}/skill-trees/${GHOST}`, { token: key }),
  },
  { route: 'POST /players/:playerId/skill-nodes/:nodeKey/unlock', field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/skill-nodes/node/unlock`, {}) },
  {
    route: 'POST /players/:playerId/skill-nodes/:nodeKey/unlock',
    field: 'path.nodeKey',
    ask: () => keyed('POST', `/players/${P()}/skill-nodes/${GHOST}/unlock`, {})(),
  },
  {
    route: 'POST /players/:playerId/skill-nodes/:nodeKey/unlock',
    field: 'body.realmId',
    ask: () => keyed('POST', `/players/${P()}/skill-nodes/node/unlock`, { realmId: GHOST })(),
  },
  { route: 'GET /players/:playerId/stats', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/stats`) },
  { route: 'GET /players/:playerId/stats', field: 'query.realmId', ask: () => call(h.base, 'GET', `/players/${P()}/stats?realmId=${GHOST}`, { token: key }) },
  { route: 'GET /stats', field: 'query.realmId', ask: asServer('GET', `/stats?realmId=${GHOST}`) },
  {
    route: 'POST /players/:playerId/stats/:key/increment',
    field: 'path.playerId',
    ask: asServer('POST', `/players/${GHOST}/stats/kills/increment`, { by: 1 }),
  },
  {
    route: 'POST /players/:playerId/stats/:key/increment',
    field: 'body.realmId',
    ask: () => call(h.base, 'POST', `/players/${P()}/stats/kills/increment`, { token: key, body: { by: 1, realmId: GHOST } }),
  },
  { route: 'POST /stats/:key/increment', field: 'body.realmId', ask: asServer('POST', '/stats/kills/increment', { by: 1, realmId: GHOST }) },

  // Inventories and what they hold.
  ...['', '/balances', '/items', '/item-stacks', '/cards', '/card-stacks'].flatMap((rest): Row[] => [
    {
      route: `GET /players/:playerId/inventories/:inventory${rest}`,
      field: 'path.playerId',
      ask: asServer('GET', `/players/${GHOST}/inventories/account${rest}`),
    },
    {
      route: `GET /players/:playerId/inventories/:inventory${rest}`,
      field: 'path.inventory',
      ask: () => call(h.base, 'GET', `/players/${P()}/inventories/${GHOST}${rest}`, { token: key }),
    },
  ]),

  // Currencies: the player, the currency, and the place the body names.
  ...['credit', 'debit', 'refund', 'consume'].flatMap((kind): Row[] => {
    const route = `POST /players/:playerId/currencies/:currencyKey/${kind}`;
    const amount = { amount: 1, reason: 'nf', ...(kind === 'consume' ? { allowance: 5 } : {}) };
    const coin = kind === 'consume' ? 'energy' : 'coins';
    return [
      { route, field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/currencies/${coin}/${kind}`, amount) },
      { route, field: 'path.currencyKey', ask: () => keyed('POST', `/players/${P()}/currencies/${GHOST}/${kind}`, amount)() },
      { route, field: 'body.inventoryId', ask: () => keyed('POST', `/players/${P()}/currencies/${coin}/${kind}`, { ...amount, inventoryId: GHOST })() },
      { route, field: 'body.realmId', ask: () => keyed('POST', `/players/${P()}/currencies/${coin}/${kind}`, { ...amount, realmId: GHOST })() },
    ];
  }),

  // Items.
  { route: 'POST /players/:playerId/items/grant', field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/items/grant`, { itemTypeKey: 'potion' }) },
  {
    route: 'POST /players/:playerId/items/grant',
    field: 'body.itemTypeKey',
    ask: () => keyed('POST', `/players/${P()}/items/grant`, { itemTypeKey: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/items/grant',
    field: 'body.inventoryId',
    ask: () => keyed('POST', `/players/${P()}/items/grant`, { itemTypeKey: 'potion', inventoryId: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/items/grant',
    field: 'body.realmId',
    ask: () => keyed('POST', `/players/${P()}/items/grant`, { itemTypeKey: 'potion', realmId: GHOST })(),
  },
  ...['consume', 'use', 'open'].flatMap((act): Row[] => [
    { route: `POST /players/:playerId/items/:itemId/${act}`, field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/items/i1/${act}`, undefined) },
    {
      route: `POST /players/:playerId/items/:itemId/${act}`,
      field: 'path.itemId',
      ask: () => keyed('POST', `/players/${P()}/items/${GHOST}/${act}`, undefined)(),
    },
  ]),
  ...['consume', 'use'].flatMap((act): Row[] => {
    const route = `POST /players/:playerId/item-stacks/${act}`;
    const body = act === 'consume' ? { quantity: 1 } : {};
    return [
      { route, field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/item-stacks/${act}`, { ...body, itemTypeKey: 'potion' }) },
      { route, field: 'body.itemTypeKey', ask: () => keyed('POST', `/players/${P()}/item-stacks/${act}`, { ...body, itemTypeKey: GHOST })() },
      {
        route,
        field: 'body.inventoryId',
        ask: () => keyed('POST', `/players/${P()}/item-stacks/${act}`, { ...body, itemTypeKey: 'potion', inventoryId: GHOST })(),
      },
      { route, field: 'body.realmId', ask: () => keyed('POST', `/players/${P()}/item-stacks/${act}`, { ...body, itemTypeKey: 'potion', realmId: GHOST })() },
    ];
  }),
  {
    route: 'POST /players/:playerId/purchases/items',
    field: 'path.playerId',
    ask: keyed('POST', `/players/${GHOST}/purchases/items`, { itemTypeKey: 'potion' }),
  },
  {
    route: 'POST /players/:playerId/purchases/items',
    field: 'body.itemTypeKey',
    ask: () => keyed('POST', `/players/${P()}/purchases/items`, { itemTypeKey: GHOST })(),
  },

  // Cards.
  { route: 'POST /players/:playerId/cards/grant', field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/cards/grant`, { cardTypeKey: 'knight' }) },
  {
    route: 'POST /players/:playerId/cards/grant',
    field: 'body.cardTypeKey',
    ask: () => keyed('POST', `/players/${P()}/cards/grant`, { cardTypeKey: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/cards/grant',
    field: 'body.cardTemplateKey',
    ask: () => keyed('POST', `/players/${P()}/cards/grant`, { cardTypeKey: 'knight', cardTemplateKey: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/cards/grant',
    field: 'body.inventoryId',
    ask: () => keyed('POST', `/players/${P()}/cards/grant`, { cardTypeKey: 'knight', inventoryId: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/cards/grant',
    field: 'body.realmId',
    ask: () => keyed('POST', `/players/${P()}/cards/grant`, { cardTypeKey: 'knight', realmId: GHOST })(),
  },
  { route: 'POST /players/:playerId/cards/:cardId/consume', field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/cards/c1/consume`, undefined) },
  {
    route: 'POST /players/:playerId/cards/:cardId/consume',
    field: 'path.cardId',
    ask: () => keyed('POST', `/players/${P()}/cards/${GHOST}/consume`, undefined)(),
  },
  ...['grant', 'consume'].flatMap((act): Row[] => {
    const route = `POST /players/:playerId/card-stacks/${act}`;
    return [
      { route, field: 'path.playerId', ask: keyed('POST', `/players/${GHOST}/card-stacks/${act}`, { cardTypeKey: 'knight', quantity: 1 }) },
      { route, field: 'body.cardTypeKey', ask: () => keyed('POST', `/players/${P()}/card-stacks/${act}`, { cardTypeKey: GHOST, quantity: 1 })() },
      {
        route,
        field: 'body.inventoryId',
        ask: () => keyed('POST', `/players/${P()}/card-stacks/${act}`, { cardTypeKey: 'knight', quantity: 1, inventoryId: GHOST })(),
      },
      {
        route,
        field: 'body.realmId',
        ask: () => keyed('POST', `/players/${P()}/card-stacks/${act}`, { cardTypeKey: 'knight', quantity: 1, realmId: GHOST })(),
      },
    ];
  }),
  {
    route: 'POST /players/:playerId/purchases/cards',
    field: 'path.playerId',
    ask: keyed('POST', `/players/${GHOST}/purchases/cards`, { cardTypeKey: 'knight' }),
  },
  {
    route: 'POST /players/:playerId/purchases/cards',
    field: 'body.cardTypeKey',
    ask: () => keyed('POST', `/players/${P()}/purchases/cards`, { cardTypeKey: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/purchases/cards',
    field: 'body.cardTemplateKey',
    ask: () => keyed('POST', `/players/${P()}/purchases/cards`, { cardTypeKey: 'knight', cardTemplateKey: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/purchases/cards',
    field: 'body.inventoryId',
    ask: () => keyed('POST', `/players/${P()}/purchases/cards`, { cardTypeKey: 'knight', inventoryId: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/purchases/cards',
    field: 'body.realmId',
    ask: () => keyed('POST', `/players/${P()}/purchases/cards`, { cardTypeKey: 'knight', realmId: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/purchases/items',
    field: 'body.inventoryId',
    ask: () => keyed('POST', `/players/${P()}/purchases/items`, { itemTypeKey: 'potion', inventoryId: GHOST })(),
  },
  {
    route: 'POST /players/:playerId/purchases/items',
    field: 'body.realmId',
    ask: () => keyed('POST', `/players/${P()}/purchases/items`, { itemTypeKey: 'potion', realmId: GHOST })(),
  },

  // Decks.
  { route: 'GET /players/:playerId/decks', field: 'path.playerId', ask: asServer('GET', `/players/${GHOST}/decks`) },
  { route: 'POST /players/:playerId/decks', field: 'path.playerId', ask: asServer('POST', `/players/${GHOST}/decks`, { inventoryId: 'inv', name: 'Main' }) },
  {
    route: 'POST /players/:playerId/decks',
    field: 'body.inventoryId',
    ask: () => call(h.base, 'POST', `/players/${P()}/decks`, { token: key, body: { inventoryId: GHOST, name: 'Main' } }),
  },
  ...[
    ['GET', ''],
    ['PATCH', '', { name: 'B' }],
    ['DELETE', ''],
    ['PUT', '/cards/c1'],
    ['DELETE', '/cards/c1'],
    ['PUT', '/types/knight', { count: 1 }],
    ['GET', '/validation'],
  ].flatMap(([method, rest, body]): Row[] => {
    const route = `${method as string} /players/:playerId/decks/:deckId${(rest as string).replace('/c1', '/:cardId').replace('/knight', '/:cardTypeKey')}`;
    return [
      { route, field: 'path.deckId', ask: () => call(h.base, method as string, `/players/${P()}/decks/${GHOST}${rest as string}`, { token: key, body }) },
    ];
  }),
  { route: 'PUT /players/:playerId/decks/:deckId/cards/:cardId', field: 'path.cardId', ask: withDeck('PUT', `/cards/${GHOST}`) },
  { route: 'PUT /players/:playerId/decks/:deckId/types/:cardTypeKey', field: 'path.cardTypeKey', ask: withDeck('PUT', `/types/${GHOST}`, { count: 1 }) },

  // Sessions.
  { route: 'GET /sessions/:sessionId', field: 'path.sessionId', ask: asServer('GET', `/sessions/${GHOST}`) },
  { route: 'POST /sessions/:sessionId/join', field: 'path.sessionId', ask: asPlayer('POST', `/sessions/${GHOST}/join`, {}) },
  { route: 'POST /sessions/:sessionId/leave', field: 'path.sessionId', ask: asPlayer('POST', `/sessions/${GHOST}/leave`) },
  { route: 'POST /sessions/:sessionId/ready', field: 'path.sessionId', ask: asPlayer('POST', `/sessions/${GHOST}/ready`, { isReady: true }) },
  {
    route: 'POST /sessions/:sessionId/players/:playerId/kick',
    field: 'path.sessionId',
    ask: () => asPlayer('POST', `/sessions/${GHOST}/players/${other.id}/kick`)(),
  },
  {
    route: 'POST /sessions/:sessionId/players/:playerId/promote',
    field: 'path.sessionId',
    ask: () => asPlayer('POST', `/sessions/${GHOST}/players/${other.id}/promote`)(),
  },
  { route: 'POST /sessions/:sessionId/status', field: 'path.sessionId', ask: asServer('POST', `/sessions/${GHOST}/status`, { status: 'PLAYING' }) },

  // Content, tours, support, commerce.
  { route: 'GET /config/tables/:key', field: 'path.key', ask: asServer('GET', `/config/tables/${GHOST}`) },
  { route: 'GET /blog/posts', field: 'query.category', ask: asServer('GET', `/blog/posts?category=${GHOST}`) },
  { route: 'GET /blog/posts', field: 'query.tag', ask: asServer('GET', `/blog/posts?tag=${GHOST}`) },
  { route: 'GET /blog/posts/:slug', field: 'path.slug', ask: asServer('GET', `/blog/posts/${GHOST}`) },
  { route: 'POST /players/:playerId/tours/:tourId/complete', field: 'path.tourId', ask: asPlayer('POST', `/players/me/tours/${GHOST}/complete`) },
  { route: 'POST /support/reports', field: 'body.playerId', ask: asPlayer('POST', '/support/reports', { playerId: GHOST, reason: 'cheating' }) },
  { route: 'POST /commerce/grants/:grantId/ack', field: 'path.grantId', ask: asServer('POST', `/commerce/grants/${GHOST}/ack`) },
];

test('every input of a not-found route that names something is walked here, or is excepted with its reason', () => {
  const walked = new Set(rows.map((r) => `${r.route} ${r.field}`));
  const excepted = (input: string) => NOT_WALKED[input] !== undefined || NOT_WALKED[`* ${input.split(' ')[2]}`] !== undefined;
  const inputs = inputsToWalk(routeTable());
  expect(inputs.filter((input) => !walked.has(input) && !excepted(input))).toEqual([]);
  // And the table names no input the route table does not have (a renamed route or field fails here).
  expect([...walked].filter((input) => !inputs.includes(input))).toEqual([]);
  expect(Object.keys(NOT_WALKED).filter((input) => !input.startsWith('* ') && !inputs.includes(input))).toEqual([]);
});

describe('a not-found quotes the key asked for and names the field that held it', () => {
  test.each(rows.map((r) => [`${r.route} (${r.field})`, r] as const))('%s', async (_name, row) => {
    const reply = await row.ask();
    expect({ status: reply.status, body: reply.body }).toEqual({
      status: 404,
      body: { error: 'not-found', message: expect.stringContaining(`"${GHOST}"`), details: { field: row.field } },
    });
    expect(reply.contract).toEqual(expect.objectContaining({ checked: true }));
  });
});
