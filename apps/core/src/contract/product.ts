/**
 * The Product manifest's spec (docs/commerce.md "Products"): something a player buys with real money
 * through the project's store. Its prices are per currency in the currency's minor units (the store's
 * wallet currency decides which one a player pays); buying it gives an entitlement; a one-time product
 * cannot be bought again while its entitlement is active (`already-active`).
 */
import { type Static, Type } from '@sinclair/typebox';
import { celRules, immutable } from './rules';
import { EnvironmentReference } from './names';
import { Defaulted, ShownDescription } from './fields';
import { GameKey, MAX_BALANCE } from './game-keys';

export const PRODUCT_LIMITS = { prices: 60 } as const;

/** An ISO 4217 currency code, as the store names a wallet's currency. */
export const StoreCurrency = Type.String({ minLength: 3, maxLength: 3, pattern: '^[A-Z]{3}$', description: 'an ISO 4217 currency code (USD, EUR…)' });

export const ProductPriceSpec = Type.Object(
  {
    currency: StoreCurrency,
    amount: Type.Integer({ minimum: 1, maximum: 100_000_000, description: "in the currency's minor units (cents for USD)" }),
  },
  { additionalProperties: false },
);

export const ProductSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'its orders, entitlements and grants are kept in that environment' }),
    sku: immutable(GameKey("the product's key, unique in its environment"), { why: 'orders and entitlements name it' }),
    name: Type.String({ minLength: 1, maxLength: 200, description: "shown to players and in the store's overlay" }),
    description: ShownDescription(),
    storeItemId: immutable(Type.Integer({ minimum: 1, maximum: 4294967295, description: "the store's numeric item id (uint32) sent with the transaction" }), {
      why: "the store's orders and reports name the item by it",
    }),
    prices: Type.Array(ProductPriceSpec, {
      minItems: 1,
      maxItems: PRODUCT_LIMITS.prices,
      description: 'one price per currency the product is sold in',
      ...celRules({ rule: 'self.all(p, self.exists_one(q, q.currency == p.currency))', message: 'must price each currency once' }),
    }),
    entitlement: GameKey('the entitlement a completed order gives'),
    currencies: Defaulted(
      Type.Array(
        Type.Object(
          { currencyKey: GameKey('a currency of the environment'), amount: Type.Integer({ minimum: 1, maximum: MAX_BALANCE, description: 'credited' }) },
          { additionalProperties: false },
        ),
        {
          maxItems: 20,
          default: [],
          description: "currencies of the game's economy a completed order credits (through the money engine, once per order)",
          ...celRules({ rule: 'self.all(c, self.exists_one(d, d.currencyKey == c.currencyKey))', message: 'must name each currency once' }),
        },
      ),
    ),
    items: Defaulted(
      Type.Array(
        Type.Object(
          { itemTypeKey: GameKey('an item type of the environment'), quantity: Type.Integer({ minimum: 1, maximum: 1000, description: 'granted' }) },
          { additionalProperties: false },
        ),
        {
          maxItems: 20,
          default: [],
          description: 'items a completed order grants (through the money engine, once per order)',
          ...celRules({ rule: 'self.all(c, self.exists_one(d, d.itemTypeKey == c.itemTypeKey))', message: 'must name each item type once' }),
        },
      ),
    ),
    repeatable: Defaulted(Type.Boolean({ default: false, description: 'false: one-time, refused `already-active` while its entitlement is active' })),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'false: not listed and not sold' })),
  },
  { additionalProperties: false },
);
export type ProductSpecT = Static<typeof ProductSpec>;

/** A product as the domain reads it (its document's spec without the environment). */
export type ProductDefinition = Omit<ProductSpecT, 'environment'> & {
  description: string;
  repeatable: boolean;
  enabled: boolean;
  currencies: { currencyKey: string; amount: number }[];
  items: { itemTypeKey: string; quantity: number }[];
};
