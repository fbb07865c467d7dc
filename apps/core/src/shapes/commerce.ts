/** The answers of the commerce routes (docs/commerce.md). */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, Shape, Timestamp } from './common';

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
    storeOrderId: Type.String({ pattern: '^[1-9][0-9]{0,19}$', description: "the store's order id, a 64-bit unsigned integer as decimal digits (never a JSON number)" }),
    status: Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s)), { description: 'docs/commerce.md "Order states"' }),
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

export const OrderSettlementShape = Shape('OrderSettlement', { order: OrderShape, entitlements: Type.Array(EntitlementShape, { description: 'what this order gave' }) });
export type OrderSettlement = Static<typeof OrderSettlementShape>;

export const ReconciliationShape = Shape('Reconciliation', {
  orders: Type.Array(OrderShape, { description: "the player's orders that were open, as they stand now" }),
  entitlements: Type.Array(EntitlementShape, { description: 'what those orders gave' }),
});
export type Reconciliation = Static<typeof ReconciliationShape>;

export const StoreIdentityShape = Shape('StoreIdentity', { storeId: Type.String({ description: "the player's store account id (64-bit, as decimal digits)" }) });

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
