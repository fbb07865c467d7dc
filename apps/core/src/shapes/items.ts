import { Type, type Static } from '@sinclair/typebox';
import { Amount } from '../contract/game-keys';
import { ITEM_OWNERSHIPS, ITEM_SCOPES, PRICE_RULES } from '../contract/item-type';
import { Figure, Nullable, OneOf, Shape, Timestamp } from './common';

// The value lists a manifest declares (spec/item-type.ts) are what the API answers.
export { ITEM_OWNERSHIPS, ITEM_SCOPES, PRICE_RULES };
export type ItemOwnership = (typeof ITEM_OWNERSHIPS)[number];

/** Item (spec §2). */
export const Item = Shape('Item', {
  id: Type.String(),
  inventoryId: Type.String(),
  itemTypeKey: Type.String(),
  grantKey: Nullable(Type.String()),
  consumedAt: Nullable(Timestamp),
  data: Type.Object({}, { additionalProperties: true }),
});
export type Item = Static<typeof Item>;

/** Stack (items) (spec §2). A stack's quantity is exact: never past 2^53-1. */
export const ItemStack = Shape('ItemStack', { itemTypeKey: Type.String(), quantity: Figure() });
export type ItemStack = Static<typeof ItemStack>;

const grantedFields = {
  inventoryId: Type.String(),
  itemTypeKey: Type.String(),
  stack: Nullable(ItemStack, { description: 'the stack after the grant (counted types); null for items held one by one' }),
  items: Type.Array(Item, { description: 'the items made (one-by-one types); empty for counted ones' }),
};

/** What one grant put where: the stack after it (counted types) or the items it made (one-by-one). */
export const GrantedItems = Shape('GrantedItems', grantedFields);
export type GrantedItems = Static<typeof GrantedItems>;

/** POST /players/:playerId/items/grant's answer. */
export const ItemGrant = Shape('ItemGrant', {
  ...grantedFields,
  alreadyGranted: Type.Boolean({ description: 'true: the grantKey had granted before; the answer is that first grant' }),
});
export type ItemGrant = Static<typeof ItemGrant>;

/** The answer of use. */
export const ItemUse = Shape('ItemUse', {
  itemTypeKey: Type.String(),
  item: Nullable(Item, { description: 'the item used, now consumed; null when taken from a stack' }),
});
export type ItemUse = Static<typeof ItemUse>;

/** The answer of opening a container: the container, now consumed, and what it gave. */
export const ContainerOpening = Shape('ContainerOpening', {
  itemTypeKey: Type.String(),
  item: Item,
  granted: Type.Array(GrantedItems, { description: 'what the container gave, one entry per item type in key order (docs/economy.md "Using and opening")' }),
});
export type ContainerOpening = Static<typeof ContainerOpening>;

export const Price = Shape('Price', {
  currencyKey: Type.String(),
  amount: Amount(),
});
export type Price = Static<typeof Price>;

export const ContainerContents = Shape('ContainerContents', {
  grants: Type.Array(Type.Object({ itemTypeKey: Type.String(), quantity: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), {
    description: 'always granted on opening',
  }),
  picks: Type.Array(
    Type.Object(
      {
        count: Type.Integer({ minimum: 1, description: 'independent draws' }),
        from: Type.Array(
          Type.Object(
            { itemTypeKey: Type.String(), quantity: Type.Integer({ minimum: 1 }), weight: Type.Integer({ minimum: 1 }) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    { description: 'weighted draws: an entry comes up with probability weight / the sum of the weights' },
  ),
});
export type ContainerContents = Static<typeof ContainerContents>;

/** An item type's switches (spec §2 "switches"): what may be done with it. */
export const ItemTypeSwitches = Shape('ItemTypeSwitches', {
  enabled: Type.Boolean({ description: 'false: listed, but not granted, bought, used or opened' }),
  usable: Type.Boolean(),
  purchasable: Type.Boolean(),
});
export type ItemTypeSwitches = Static<typeof ItemTypeSwitches>;

/**
 * An item type (spec §2 "Item type definition", §4 Definitions; docs/economy.md "Item types"): every
 * field always present. The switches are answered both in `switches` (as the spec lists them) and as
 * the fields they were first answered as.
 */
export const ItemTypeDefinition = Shape('ItemTypeDefinition', {
  key: Type.String({ description: 'the item type key' }),
  name: Type.String(),
  description: Type.String(),
  icon: Nullable(Type.String()),
  category: Type.String({ description: '`container` items are opened for their contents' }),
  ownership: OneOf(ITEM_OWNERSHIPS),
  scope: OneOf(ITEM_SCOPES),
  switches: ItemTypeSwitches,
  enabled: Type.Boolean({ description: 'as switches.enabled' }),
  usable: Type.Boolean({ description: 'as switches.usable' }),
  purchasable: Type.Boolean({ description: 'as switches.purchasable' }),
  maxOwned: Nullable(Type.Integer({ minimum: 1 }), { description: 'the most one inventory may hold; null: no limit' }),
  priceRule: OneOf(PRICE_RULES),
  prices: Type.Array(Price),
  data: Type.Object({}, { additionalProperties: true }),
  contents: Nullable(ContainerContents, { description: 'what opening a container grants; null for every other category' }),
  requires: Type.Array(Type.String(), { description: 'unlock keys needed to use or open it' }),
});
export type ItemTypeDefinition = Static<typeof ItemTypeDefinition>;
