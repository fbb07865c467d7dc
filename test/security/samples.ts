/**
 * Good requests for the routes the authorization attacks send again with something wrong (api3,
 * api5): each `Prepare` makes what the request needs for a fresh player (`subject`) and answers a
 * request that succeeds with the route's own credential.
 */
import { call, type Reply } from '../support/http';
import { type Actor, type World, idem } from './world';

/** A request that succeeds with the route's own credential; `path(asServer)` names the subject as a server key or a player token would. */
export interface Sample {
  path: (asServer: boolean) => string;
  body?: unknown;
  ok: number;
}
export type Prepare = (w: World, subject: Actor) => Promise<Sample>;

export const must = (reply: Reply, ...ok: number[]) => {
  if (!ok.includes(reply.status)) throw new Error(`prepare: ${reply.status} ${reply.text}`);
  return reply.body;
};
const me = (subject: Actor) => (asServer: boolean) => (asServer ? subject.id : 'me');
const at = (w: World) => w.h.base;
export const hostSession = async (w: World, host: Actor) =>
  must(await call(at(w), 'POST', '/sessions', { token: host.token, body: { gameMode: 'duel', map: 'harbor' } }), 201).id as string;

/** A new deck of the subject's, in their account inventory. */
async function deckOf(w: World, s: Actor): Promise<string> {
  const account = must(await call(at(w), 'GET', `/players/${s.id}/inventories/account`, { token: s.key }), 200);
  return must(await call(at(w), 'POST', `/players/${s.id}/decks`, { token: s.key, body: { inventoryId: account.id, name: 'Deck' } }), 201).id as string;
}

export const SAMPLES: Record<string, Prepare> = {
  // server routes
  'POST /auth/server': async (_w, s) => ({ path: () => '/auth/server', body: { subject: `api5-made-by-${s.id}` }, ok: 201 }),
  'DELETE /players/:playerId': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}`, ok: 204 }),
  'POST /sessions/:sessionId/status': async (w, s) => {
    const id = await hostSession(w, s);
    // Everyone seated ready moves it to PREPARING_INSTANCE, where a game server reports.
    must(await call(at(w), 'POST', `/sessions/${id}/ready`, { token: s.token, body: { isReady: true } }), 200);
    return { path: () => `/sessions/${id}/status`, body: { status: 'ERROR', error: 'api5' }, ok: 200 };
  },
  'POST /crash-symbols/uploads': async () => ({
    path: () => '/crash-symbols/uploads',
    body: { label: 'game', version: '1.0', fileName: 'game.sym', sizeBytes: 10, sha256: '0'.repeat(64) },
    ok: 200,
  }),
  'GET /crash-symbols/files': async () => ({ path: () => '/crash-symbols/files', ok: 200 }),
  'GET /definitions/realms': async () => ({ path: () => '/definitions/realms', ok: 200 }),
  'GET /definitions/currencies': async () => ({ path: () => '/definitions/currencies', ok: 200 }),
  'GET /definitions/item-types': async () => ({ path: () => '/definitions/item-types', ok: 200 }),
  'GET /definitions/card-types': async () => ({ path: () => '/definitions/card-types', ok: 200 }),
  'GET /definitions/card-templates': async () => ({ path: () => '/definitions/card-templates', ok: 200 }),
  // Cards go to the account (realmId null): no realm is open in this world.
  'POST /players/:playerId/cards/grant': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/cards/grant`,
    body: { cardTypeKey: 'sec-card', realmId: null },
    ok: 200,
  }),
  'POST /players/:playerId/cards/:cardId/consume': async (w, s) => {
    const granted = must(await call(at(w), 'POST', `/players/${s.id}/cards/grant`, { token: s.key, body: { cardTypeKey: 'sec-card', realmId: null } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/cards/${granted.card.id}/consume`, ok: 200 };
  },
  'POST /players/:playerId/card-stacks/grant': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/card-stacks/grant`,
    body: { cardTypeKey: 'sec-card', quantity: 2, realmId: null },
    ok: 200,
  }),
  'POST /players/:playerId/card-stacks/consume': async (w, s) => {
    must(
      await call(at(w), 'POST', `/players/${s.id}/card-stacks/grant`, {
        token: s.key,
        headers: idem(),
        body: { cardTypeKey: 'sec-card', quantity: 2, realmId: null },
      }),
      200,
    );
    return { path: (srv) => `/players/${me(s)(srv)}/card-stacks/consume`, body: { cardTypeKey: 'sec-card', quantity: 1, realmId: null }, ok: 200 };
  },
  'POST /players/:playerId/currencies/:currencyKey/credit': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/credit`,
    body: { amount: 5, reason: 'api5' },
    ok: 200,
  }),
  'POST /players/:playerId/currencies/:currencyKey/debit': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/currencies/sec-gems/credit`, { token: s.key, headers: idem(), body: { amount: 5, reason: 'api5' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/debit`, body: { amount: 1, reason: 'api5' }, ok: 200 };
  },
  'POST /players/:playerId/currencies/:currencyKey/refund': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/refund`,
    body: { amount: 1, reason: 'api5' },
    ok: 200,
  }),
  'POST /players/:playerId/currencies/:currencyKey/consume': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/currencies/sec-energy/consume`,
    body: { amount: 1, allowance: 10, reason: 'api5' },
    ok: 200,
  }),
  'POST /players/:playerId/items/grant': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/items/grant`,
    body: { itemTypeKey: 'sec-relic' },
    ok: 200,
  }),
  'POST /players/:playerId/items/:itemId/consume': async (w, s) => {
    const granted = must(await call(at(w), 'POST', `/players/${s.id}/items/grant`, { token: s.key, headers: idem(), body: { itemTypeKey: 'sec-relic' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/items/${granted.items[0].id}/consume`, ok: 200 };
  },
  'POST /players/:playerId/item-stacks/consume': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/items/grant`, { token: s.key, headers: idem(), body: { itemTypeKey: 'sec-stack', quantity: 2 } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/item-stacks/consume`, body: { itemTypeKey: 'sec-stack', quantity: 1 }, ok: 200 };
  },
  'PUT /players/:playerId/unlocks/:key': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/unlocks/api5.key`, body: { source: 'api5' }, ok: 201 }),
  'DELETE /players/:playerId/unlocks/:key': async (w, s) => {
    must(await call(at(w), 'PUT', `/players/${s.id}/unlocks/api5.gone`, { token: s.key, body: {} }), 201);
    return { path: (srv) => `/players/${me(s)(srv)}/unlocks/api5.gone`, ok: 204 };
  },
  'GET /definitions/skill-trees': async () => ({ path: () => '/definitions/skill-trees', ok: 200 }),
  'POST /players/:playerId/xp': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/xp`, body: { amount: 5, track: 'api5' }, ok: 200 }),
  'POST /players/:playerId/stats/:key/increment': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/stats/api5.stat/increment`,
    body: { by: 2 },
    ok: 200,
  }),
  'POST /stats/:key/increment': async () => ({ path: () => '/stats/api5.stat/increment', body: { by: 2 }, ok: 200 }),
  // player routes
  'GET /realtime': async () => ({ path: () => '/realtime', ok: 200 }),
  'POST /sessions': async () => ({ path: () => '/sessions', body: { gameMode: 'duel', map: 'harbor' }, ok: 201 }),
  'POST /sessions/:sessionId/join': async (w) => {
    const id = await hostSession(w, await w.newActor());
    return { path: () => `/sessions/${id}/join`, body: {}, ok: 200 };
  },
  'POST /sessions/:sessionId/leave': async (w, s) => {
    const id = await hostSession(w, s);
    return { path: () => `/sessions/${id}/leave`, ok: 204 };
  },
  'POST /sessions/:sessionId/ready': async (w, s) => {
    const id = await hostSession(w, s);
    return { path: () => `/sessions/${id}/ready`, body: { isReady: true }, ok: 200 };
  },
  'POST /sessions/:sessionId/players/:playerId/kick': async (w, s) => {
    const id = await hostSession(w, s);
    const guest = await w.newActor();
    must(await call(at(w), 'POST', `/sessions/${id}/join`, { token: guest.token, body: {} }), 200);
    return { path: () => `/sessions/${id}/players/${guest.id}/kick`, ok: 200 };
  },
  'POST /sessions/:sessionId/players/:playerId/promote': async (w, s) => {
    const id = await hostSession(w, s);
    const guest = await w.newActor();
    must(await call(at(w), 'POST', `/sessions/${id}/join`, { token: guest.token, body: {} }), 200);
    return { path: () => `/sessions/${id}/players/${guest.id}/promote`, ok: 200 };
  },
  'POST /players/:playerId/legal/accept': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/legal/accept`,
    body: { documents: [{ document: 'sec-terms', version: '1' }] },
    ok: 200,
  }),
  'GET /players/:playerId/tours': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/tours`, ok: 200 }),
  'POST /players/:playerId/tours/:tourId/complete': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/tours/sec-tour/complete`, ok: 204 }),
  'POST /support/requests': async () => ({
    path: () => '/support/requests',
    body: { subject: 'Help me', message: 'Something is broken in the shop.' },
    ok: 201,
  }),
  'POST /support/reports': async (w) => ({ path: () => '/support/reports', body: { playerId: w.attacker.id, reason: 'cheating' }, ok: 201 }),
  // licence routes: a machine of the subject's own (its project's licence key is the credential)
  'POST /licence/activate': async (_w, s) => ({
    path: () => '/licence/activate',
    body: { machineId: `machine-${s.id}`, product: 'sec-plugin', version: '1.0.0' },
    ok: 200,
  }),
  'POST /licence/check': async (w, s) => {
    must(
      await call(at(w), 'POST', '/licence/activate', { token: s.licence, body: { machineId: `machine-${s.id}`, product: 'sec-plugin', version: '1.0.0' } }),
      200,
    );
    return { path: () => '/licence/check', body: { machineId: `machine-${s.id}` }, ok: 200 };
  },
  'POST /licence/release': async (w, s) => {
    must(
      await call(at(w), 'POST', '/licence/activate', { token: s.licence, body: { machineId: `machine-${s.id}`, product: 'sec-plugin', version: '1.0.0' } }),
      200,
    );
    return { path: () => '/licence/release', body: { machineId: `machine-${s.id}` }, ok: 204 };
  },
  // No store is set up in these environments: a good-shaped commerce request passes input validation
  // and is refused by its handler (STORE_NOT_SET_UP); test/commerce and commerce.test.ts here run them against a stand-in store.
  'POST /commerce/orders': async () => ({
    path: () => '/commerce/orders',
    body: { sku: 'sec-product', provider: 'steam', language: 'en' },
    ok: STORE_NOT_SET_UP,
  }),
  'POST /commerce/store/identify': async () => ({ path: () => '/commerce/store/identify', body: { ticket: 'ABCD', identity: 'hearth' }, ok: STORE_NOT_SET_UP }),
  'POST /commerce/store/authorizations': async () => ({
    path: () => '/commerce/store/authorizations',
    body: { storeOrderId: '12345', authorized: true },
    ok: STORE_NOT_SET_UP,
  }),
  'GET /commerce/catalog': async () => ({ path: () => '/commerce/catalog', ok: STORE_NOT_SET_UP }),
  'POST /commerce/orders/reconcile': async () => ({ path: () => '/commerce/orders/reconcile', ok: STORE_NOT_SET_UP }),
  'GET /commerce/grants': async () => ({ path: () => '/commerce/grants', ok: 200 }),
  'GET /commerce/grants/changes': async () => ({ path: () => '/commerce/grants/changes', ok: 200 }),
  'POST /commerce/grants/:grantId/ack': async (w) => ({ path: () => `/commerce/grants/${w.ids.grantId}/ack`, ok: 200 }),
  // routes of either credential, and of none, that take a body (api3)
  'POST /auth/idp': async () => ({ path: () => '/auth/idp', body: { appKey: 'alpha-live', idToken: 'not.a.token' }, ok: IDP_WITHOUT_PROVIDER }),
  'POST /auth/refresh': async (_w, s) => ({ path: () => '/auth/refresh', body: { refreshToken: s.refresh }, ok: 200 }),
  'POST /auth/dashboard': async () => ({
    path: () => '/auth/dashboard',
    body: { appKey: 'alpha-live', code: 'a-code', codeVerifier: 'v'.repeat(43), nonce: 'n'.repeat(16) },
    ok: DASHBOARD_WITHOUT_PROVIDER,
  }),
  'PATCH /players/:playerId': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}`, body: { displayName: 'Renamed' }, ok: 200 }),
  'PUT /players/:playerId/data/:key': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/data/slot`, body: { data: { gold: 1 } }, ok: 201 }),
  'POST /players/:playerId/item-stacks/use': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/items/grant`, { token: s.key, headers: idem(), body: { itemTypeKey: 'sec-stack', quantity: 2 } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/item-stacks/use`, body: { itemTypeKey: 'sec-stack' }, ok: 200 };
  },
  'POST /players/:playerId/purchases/cards': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/currencies/sec-gems/credit`, { token: s.key, headers: idem(), body: { amount: 5, reason: 'api3' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/purchases/cards`, body: { cardTypeKey: 'sec-card', realmId: null }, ok: 200 };
  },
  'POST /players/:playerId/decks': async (w, s) => {
    const account = must(await call(at(w), 'GET', `/players/${s.id}/inventories/account`, { token: s.key }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/decks`, body: { inventoryId: account.id, name: 'Deck' }, ok: 201 };
  },
  'PATCH /players/:playerId/decks/:deckId': async (w, s) => {
    const deck = await deckOf(w, s);
    return { path: (srv) => `/players/${me(s)(srv)}/decks/${deck}`, body: { name: 'Renamed' }, ok: 200 };
  },
  'PUT /players/:playerId/decks/:deckId/types/:cardTypeKey': async (w, s) => {
    const deck = await deckOf(w, s);
    return { path: (srv) => `/players/${me(s)(srv)}/decks/${deck}/types/sec-card`, body: { count: 2 }, ok: 200 };
  },
  'POST /players/:playerId/skill-nodes/:nodeKey/unlock': async (_w, s) => ({
    path: (srv) => `/players/${me(s)(srv)}/skill-nodes/sec-node/unlock`,
    body: {},
    ok: 200,
  }),
  'POST /players/:playerId/purchases/items': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/currencies/sec-gems/credit`, { token: s.key, headers: idem(), body: { amount: 5, reason: 'api3' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/purchases/items`, body: { itemTypeKey: 'sec-potion' }, ok: 200 };
  },
};

/**
 * No identity provider is set up in the test environments, so the good-shaped identity-provider
 * sign-in is refused by its handler with this status (provider-disabled): past input validation.
 */
export const IDP_WITHOUT_PROVIDER = 403;

/**
 * No project of the test world has a custom dashboard, so the good-shaped dashboard sign-in is
 * refused by its handler with this status (not-found): past input validation.
 */
export const DASHBOARD_WITHOUT_PROVIDER = 404;
/** No project of the security tests sells through a store: the commerce routes answer `service-disabled` past validation. */
export const STORE_NOT_SET_UP = 403;
