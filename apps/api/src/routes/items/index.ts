import { Type } from '@sinclair/typebox';
import { Amount, GameKey, ITEM_OWNERSHIPS, ITEM_SCOPES, PRICE_RULES } from '@hearth/core';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { PageOf, PageQuery } from '../../http/schema-helpers';

const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

// Answer shapes (the manifest's own schemas carry CEL rules, which are no JSON Schema keywords).
const Price = Type.Object({ currencyKey: Type.String(), amount: Amount() }, { additionalProperties: false });
const ContainerContents = Type.Object(
  {
    grants: Type.Array(Type.Object({ itemTypeKey: Type.String(), quantity: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), {
      description: 'always granted on opening',
    }),
    picks: Type.Array(
      Type.Object(
        {
          count: Type.Integer({ minimum: 1, description: 'independent draws' }),
          from: Type.Array(
            Type.Object({ itemTypeKey: Type.String(), quantity: Type.Integer({ minimum: 1 }), weight: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'weighted draws: an entry comes up with probability weight / the sum of the weights' },
    ),
  },
  { additionalProperties: false },
);

/** The item type definition (spec §2; docs/economy.md "Item types"): every field always present. */
const ItemTypeDefinition = Type.Object(
  {
    key: GameKey('the item type key'),
    name: Type.String(),
    description: Type.String(),
    icon: Type.Union([Type.String(), Type.Null()]),
    category: Type.String({ description: '`container` items are opened for their contents' }),
    ownership: oneOf(ITEM_OWNERSHIPS),
    scope: oneOf(ITEM_SCOPES),
    enabled: Type.Boolean({ description: 'false: listed, but not granted, bought, used or opened' }),
    usable: Type.Boolean(),
    purchasable: Type.Boolean(),
    maxOwned: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'the most one inventory may hold; null: no limit' }),
    priceRule: oneOf(PRICE_RULES),
    prices: Type.Array(Price),
    data: Type.Object({}, { additionalProperties: true }),
    contents: Type.Union([ContainerContents, Type.Null()], { description: 'what opening a container grants; null for every other category' }),
    requires: Type.Array(Type.String(), { description: 'unlock keys needed to use or open it' }),
  },
  { additionalProperties: false },
);

export const listItemTypeDefinitions = defineRoute({
  operationId: 'listItemTypeDefinitions',
  method: 'GET',
  path: '/definitions/item-types',
  summary: "The environment's item types, ordered by key",
  description: 'Switched-off item types are listed with `enabled: false`; deleted ones are not listed.',
  tag: 'definitions',
  credential: 'server',
  service: 'inventory',
  query: Type.Object(PageQuery, { additionalProperties: false }),
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of item type definitions', schema: PageOf(ItemTypeDefinition) },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.itemTypes.listDefinitions(ctx.env, ctx.query) }),
});
