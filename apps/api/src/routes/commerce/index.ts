import { refuse } from '@hearth/core';
import { CATALOG_DEFAULT_CURRENCY, IDENTIFY_LIMIT, IdentifyLimitReached, isUint64 } from '@hearth/core/commerce';
import {
  CatalogQuery,
  CatalogShape,
  EntitlementShape,
  GrantChangePageShape,
  GrantPath,
  GrantShape,
  IdentifyRequest,
  OrderAuthorization,
  OrderRequest,
  OrderSettlementShape,
  OrderShape,
  ReconciliationShape,
  StoreIdentityShape,
  PageOf,
  PageOnlyQuery,
} from '@hearth/core/shapes';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { listedForPlayer, playerPage, targetPlayerId } from '../players/target';
import { listedForEnvironment } from '../definitions';
import { commerceRoute } from './area';

/** Said on the routes that ask the store. */
const STORE_NOTE =
  'The store answering an error of its own is `provider-refused` (502) with `details.storeErrorCode`; a store that cannot be reached, or a publisher key that cannot be read, is `unavailable` (503); a project that sets no store is `service-disabled`.';

export const getCatalog = commerceRoute({
  operationId: 'getCommerceCatalog',
  method: 'GET',
  path: '/commerce/catalog',
  summary: 'The products on sale, priced for the player',
  description:
    `Priced in the player's store wallet currency once the player has identified (a product without a price in that currency is not listed); before that, in ${CATALOG_DEFAULT_CURRENCY} where the product has that price, else its first price. ` +
    "`active` says whether the player holds the product's entitlement now.",
  credential: 'player',
  query: CatalogQuery,
  success: { status: 200, description: 'The catalog', schema: CatalogShape },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.commerce.catalog(ctx.db, ctx.env, ctx.principal.playerId, ctx.query.provider ?? 'steam') }),
});

export const identifyStoreAccount = commerceRoute({
  operationId: 'identifyStoreAccount',
  method: 'POST',
  path: '/commerce/store/identify',
  summary: "Prove the player's store account",
  description:
    "`ticket` is the hex ticket the store's SDK made with GetAuthTicketForWebApi(identity); the store's answer alone says which account it proves. " +
    `At most ${IDENTIFY_LIMIT.limit} per player per ${IDENTIFY_LIMIT.windowSeconds / 60} clock minutes; the next is 429 \`rate-limited\` with Retry-After and never reaches the store. ` +
    `A ticket the store refuses is \`invalid-ticket\`. ${STORE_NOTE}`,
  credential: 'player',
  bodyLimit: BODY_LIMITS.gameService,
  body: IdentifyRequest,
  success: { status: 200, description: 'The store account proved', schema: StoreIdentityShape },
  refusals: ['invalid-request', 'invalid-ticket', 'rate-limited', 'provider-refused', 'unavailable'],
  handler: async (ctx) => {
    try {
      const { storeId, standing } = await ctx.core.commerce.identify(ctx.db, ctx.env, ctx.principal.playerId, ctx.body);
      ctx.noteLimit(standing);
      return { body: { storeId } };
    } catch (err) {
      if (err instanceof IdentifyLimitReached) ctx.noteLimit(err.standing);
      throw err;
    }
  },
});

export const createOrder = commerceRoute({
  operationId: 'createCommerceOrder',
  method: 'POST',
  path: '/commerce/orders',
  summary: 'Start buying a product',
  description:
    "The order is made first, then the store is asked to show the player its overlay in the player's wallet currency. " +
    '`no-steam-account` before identify; `purchase-not-allowed` when the store will not let the player buy; `already-active` when a one-time product is held; ' +
    '`order-in-progress` while an order for the product waits for the player; `not-purchasable` when the product has no price in the wallet currency. ' +
    `A retry under the same Idempotency-Key answers the order the first made, as it stands. ${STORE_NOTE}`,
  credential: 'player',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  idempotencyRecord: 'handler',
  body: OrderRequest,
  success: { status: 201, description: 'The order, waiting for the player', schema: OrderShape },
  refusals: [
    'not-found',
    'no-steam-account',
    'purchase-not-allowed',
    'already-active',
    'order-in-progress',
    'not-purchasable',
    'idempotency-conflict',
    'provider-refused',
    'unavailable',
  ],
  handler: async (ctx) => {
    const { order, replayed } = await ctx.core.commerce.createOrder(ctx.db, ctx.env, ctx.principal.playerId, ctx.body, ctx.idempotency);
    return { status: 201, body: order, replayed };
  },
});

export const authorizeOrder = commerceRoute({
  operationId: 'authorizeCommerceOrder',
  method: 'POST',
  path: '/commerce/store/authorizations',
  summary: "Tell the service the player answered the store's overlay",
  description:
    "A hint only (the SDK's MicroTxnAuthorizationResponse_t): the store is asked for the order's status, an approved order is finalized once and its entitlements granted once, whatever the hint says and however often it is sent. " +
    '`entitlements` are those this order gave. The currencies and items a product gives move through the economy with the completion; ' +
    'when the economy refuses one (`balance-cap`, `disabled`, `owned-limit`, `no-current-realm`, `not-found`), nothing is granted, the order stays open and the next settlement tries again. ' +
    STORE_NOTE,
  credential: 'player',
  bodyLimit: BODY_LIMITS.gameService,
  body: OrderAuthorization,
  success: { status: 200, description: 'The order as it stands', schema: OrderSettlementShape },
  refusals: ['invalid-request', 'not-found', 'balance-cap', 'disabled', 'owned-limit', 'no-current-realm', 'provider-refused', 'unavailable'],
  handler: async (ctx) => {
    if (!isUint64(ctx.body.storeOrderId)) throw refuse.invalid('storeOrderId', 'storeOrderId must be a 64-bit unsigned integer.');
    return { body: await ctx.core.commerce.authorize(ctx.db, ctx.env, ctx.principal.playerId, ctx.body) };
  },
});

export const reconcileOrders = commerceRoute({
  operationId: 'reconcileCommerceOrders',
  method: 'POST',
  path: '/commerce/orders/reconcile',
  summary: "Settle the player's open orders with the store",
  description: `Each order still waiting is asked of the store and settled as the authorization hint would settle it. An order that cannot be settled now (the store out of reach, a refusal) stays open and is answered as it stands beside the others; only when none of them could be settled is the refusal the answer. ${STORE_NOTE}`,
  credential: 'player',
  success: { status: 200, description: 'The orders that were open, as they stand now', schema: ReconciliationShape },
  refusals: ['not-found', 'balance-cap', 'disabled', 'owned-limit', 'no-current-realm', 'provider-refused', 'unavailable'],
  handler: async (ctx) => ({ body: await ctx.core.commerce.reconcile(ctx.db, ctx.env, ctx.principal.playerId) }),
});

export const listEntitlements = commerceRoute({
  ...playerPage('commerce'),
  ...listedForPlayer((ctx, playerId) => ctx.core.commerce.listEntitlements(ctx.db, ctx.env, playerId, ctx.query)),
  operationId: 'listEntitlements',
  path: '/players/:playerId/entitlements',
  summary: "The player's entitlements, oldest first",
  description: 'Active and revoked alike (a revoked one carries `revokedAt`).',
  success: { status: 200, description: 'A page of entitlements', schema: PageOf(EntitlementShape) },
});

export const listGrants = commerceRoute({
  operationId: 'listCommerceGrants',
  path: '/commerce/grants',
  summary: 'The grants no server has acknowledged',
  description:
    "The environment's active entitlements that no server has acknowledged yet, oldest first: what a game server applies in the game, then acknowledges.",
  success: { status: 200, description: 'A page of grants', schema: PageOf(GrantShape) },
  ...listedForEnvironment({ service: 'commerce', credential: 'server' }, (ctx) => ctx.core.commerce.listGrants(ctx.db, ctx.env, ctx.query)),
});

export const listGrantChanges = commerceRoute({
  operationId: 'listCommerceGrantChanges',
  path: '/commerce/grants/changes',
  summary: 'The feed of grants given and revoked',
  description:
    'In the order they were committed. `next` is never null: it is where to ask from next; an empty page means up to date (ask again later with the same cursor).',
  success: { status: 200, description: 'A page of changes', schema: GrantChangePageShape },
  ...listedForEnvironment({ service: 'commerce', credential: 'server' }, (ctx) => ctx.core.commerce.grantChanges(ctx.db, ctx.env, ctx.query)),
});

export const acknowledgeGrant = commerceRoute({
  operationId: 'acknowledgeCommerceGrant',
  method: 'POST',
  path: '/commerce/grants/:grantId/ack',
  summary: 'Acknowledge a grant',
  description:
    'The grant leaves GET /commerce/grants. Acknowledging it again answers the first acknowledgement; a grant of another environment is `not-found`.',
  credential: 'server',
  params: GrantPath,
  success: { status: 200, description: 'The grant, acknowledged', schema: GrantShape },
  refusals: ['not-found'],
  handler: async (ctx) => ({ body: await ctx.core.commerce.acknowledgeGrant(ctx.db, ctx.env, ctx.params.grantId) }),
});

/** The commerce area's routes: routes/index.ts registers them by this one name. */
export const commerceRoutes: AnyRoute[] = [
  getCatalog,
  createOrder,
  identifyStoreAccount,
  authorizeOrder,
  reconcileOrders,
  listEntitlements,
  listGrants,
  listGrantChanges,
  acknowledgeGrant,
];
