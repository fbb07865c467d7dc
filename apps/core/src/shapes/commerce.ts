/** The answers of the commerce routes and what their callers send (docs/commerce.md). */
import { type Static, Type } from '@sinclair/typebox';
import { STORE_PROVIDERS } from '../contract/store';
import { Id, Nullable, Shape, Timestamp } from './common';

export const ORDER_STATUSES = ['pending', 'awaiting-player', 'completed', 'failed', 'refunded', 'chargedback'] as const;
export const ENTITLEMENT_STATUSES = ['active', 'revoked'] as const;

const Minor = Type.Integer({ minimum: 1, maximum: 100_000_000, description: "the price in the currency's minor units" });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' });

export const CatalogProductShape = Shape(
  'CatalogProduct',
  {
    sku: Type.String(),
    name: Type.String(),
    description: Type.String(),
    currency: Currency,
    amount: Minor,
    repeatable: Type.Boolean({ description: 'false: one-time, not sold again while its entitlement is active' }),
    active: Type.Boolean({ description: 'the player holds its entitlement now' }),
  },
  { description: 'A product priced for the player' },
);
export type CatalogProduct = Static<typeof CatalogProductShape>;

export const CatalogShape = Shape('Catalog', { products: Type.Array(CatalogProductShape) });
export type Catalog = Static<typeof CatalogShape>;

export const OrderShape = Shape(
  'Order',
  {
    id: Type.String(),
    sku: Type.String(),
    provider: Type.Literal('steam'),
    storeOrderId: Type.String({
      pattern: '^[1-9][0-9]{0,19}$',
      description: "the store's order id, a 64-bit unsigned integer as decimal digits (never a JSON number)",
    }),
    status: Type.Union(
      ORDER_STATUSES.map((s) => Type.Literal(s)),
      { description: 'docs/commerce.md "Order states"' },
    ),
    currency: Currency,
    amount: Minor,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'A purchase through the store' },
);
export type Order = Static<typeof OrderShape>;
export type OrderStatus = Order['status'];

export const EntitlementShape = Shape(
  'Entitlement',
  {
    id: Type.String(),
    key: Type.String({ description: 'the entitlement key the product gives' }),
    sku: Type.String({ description: 'the product bought' }),
    orderId: Type.String(),
    status: Type.Union(ENTITLEMENT_STATUSES.map((s) => Type.Literal(s))),
    grantedAt: Timestamp,
    revokedAt: Nullable(Timestamp),
  },
  { description: 'What a completed order gave the player' },
);
export type Entitlement = Static<typeof EntitlementShape>;

export const OrderSettlementShape = Shape('OrderSettlement', {
  order: OrderShape,
  entitlements: Type.Array(EntitlementShape, { description: 'what this order gave' }),
});
export type OrderSettlement = Static<typeof OrderSettlementShape>;

export const ReconciliationShape = Shape('Reconciliation', {
  orders: Type.Array(OrderShape, { description: "the player's orders that were open, as they stand now" }),
  entitlements: Type.Array(EntitlementShape, { description: 'what those orders gave' }),
});
export type Reconciliation = Static<typeof ReconciliationShape>;

export const StoreIdentityShape = Shape('StoreIdentity', {
  storeId: Type.String({ description: "the player's store account id (64-bit, as decimal digits)" }),
});

export const GrantShape = Shape(
  'Grant',
  {
    id: Type.String({ description: 'the entitlement it gives' }),
    playerId: Type.String(),
    key: Type.String({ description: 'the entitlement key' }),
    sku: Type.String(),
    orderId: Type.String(),
    status: Type.Union(ENTITLEMENT_STATUSES.map((s) => Type.Literal(s))),
    grantedAt: Timestamp,
    revokedAt: Nullable(Timestamp),
    acknowledgedAt: Nullable(Timestamp, { description: 'when a server acknowledged it; null until then' }),
  },
  { description: "An entitlement as the game's servers see it: given to a player, to be applied in the game and acknowledged" },
);
export type Grant = Static<typeof GrantShape>;

export const GrantChangeShape = Shape(
  'GrantChange',
  {
    change: Type.Union([Type.Literal('granted'), Type.Literal('revoked')]),
    at: Timestamp,
    grant: GrantShape,
  },
  { description: 'A grant given or revoked, in the order they were committed' },
);
export type GrantChange = Static<typeof GrantChangeShape>;

export const GrantChangePageShape = Shape('GrantChangePage', {
  items: Type.Array(GrantChangeShape),
  next: Type.String({ description: 'where to ask from next; never null (an empty page means up to date)' }),
});
export type GrantChangePage = Static<typeof GrantChangePageShape>;

// What callers send: declared once, for the route's validation and the document, and the service's types.

const Provider = Type.Union(
  STORE_PROVIDERS.map((p) => Type.Literal(p)),
  { description: 'the store: `steam`' },
);
const StoreOrderId = Type.String({
  minLength: 1,
  maxLength: 20,
  pattern: '^[1-9][0-9]{0,19}$',
  description: "the order's storeOrderId (the store's m_ulOrderID), as decimal digits",
});

/** GET /commerce/catalog. */
export const CatalogQuery = Type.Object(
  { provider: Type.Optional({ ...Provider, description: 'the store: `steam` (the default, today the only one)' }) },
  { additionalProperties: false },
);

/** POST /commerce/store/identify: the store SDK's ticket for the game's identity string. */
export const IdentifyRequest = Type.Object(
  {
    ticket: Type.String({ minLength: 2, maxLength: 8192, pattern: '^([0-9A-Fa-f]{2})+$', description: 'the ticket, hex' }),
    identity: Type.String({ minLength: 1, maxLength: 64, description: "the game's fixed identity string of the commerce flow" }),
  },
  { additionalProperties: false },
);
export type IdentifyRequest = Static<typeof IdentifyRequest>;

/** POST /commerce/orders: the product, the store, and the overlay's language. */
export const OrderRequest = Type.Object(
  {
    sku: Type.String({ minLength: 1, maxLength: 128, description: 'the product' }),
    provider: Provider,
    language: Type.String({
      minLength: 2,
      maxLength: 10,
      pattern: '^[a-z]{2}([-_][A-Za-z]{2,4})?$',
      description: "the overlay's language (ISO 639-1, e.g. `en`)",
    }),
  },
  { additionalProperties: false },
);
export type OrderRequest = Static<typeof OrderRequest>;

/** POST /commerce/store/authorizations: the player's answer to the overlay, a hint only. */
export const OrderAuthorization = Type.Object(
  { storeOrderId: StoreOrderId, authorized: Type.Boolean({ description: "the player's answer as the SDK reported it" }) },
  { additionalProperties: false },
);
export type OrderAuthorization = Static<typeof OrderAuthorization>;

/** POST /commerce/grants/:grantId/ack. */
export const GrantPath = Type.Object({ grantId: Id('a grant id') }, { additionalProperties: false });
