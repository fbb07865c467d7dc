/**
 * Items players hold (spec §4 Game services "Items", "Realms and inventories"): the lists of an
 * inventory's items and stacks, grants, consumptions, use and opening. The domain is
 * apps/core/src/items/service.ts; docs/economy.md "Items held", "Using and opening".
 *
 * Idempotency-Key ("grants and takings need Idempotency-Key"): required on the server's grant and
 * consumptions; optional on use and open (either credential), where a retry under the same key
 * answers the first use instead of using a second item of a stack (or `already-consumed`).
 */
import { Type } from '@sinclair/typebox';
import { GameKey, ITEM_DATA_MAX_BYTES, ITEM_QUANTITY_MAX, type EngineAnswer } from '@hearth/core';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { Id, PageOf, PageQuery, Timestamp } from '../../http/schema-helpers';
import { targetPlayerId } from '../players/target';
import { Figure, Inventory, InventoryParams } from '../economy';

/** Item (spec §2). */
/** A move of the money engine as a handler's result: the first answer, or its replay (Idempotent-Replayed). */
const engineAnswer = <T>({ answer, replayed }: EngineAnswer<T>) => ({ body: answer, replayed });

const Item = Type.Object(
  {
    id: Type.String(),
    inventoryId: Type.String(),
    itemTypeKey: Type.String(),
    grantKey: Type.Union([Type.String(), Type.Null()]),
    consumedAt: Type.Union([Timestamp, Type.Null()]),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

/** Stack (items) (spec §2). A stack's quantity is exact: never past 2^53-1. */
const Stack = Type.Object({ itemTypeKey: Type.String(), quantity: Figure }, { additionalProperties: false });

const grantedFields = {
  inventoryId: Type.String(),
  itemTypeKey: Type.String(),
  stack: Type.Union([Stack, Type.Null()], { description: 'the stack after the grant (counted types); null for items held one by one' }),
  items: Type.Array(Item, { description: 'the items made (one-by-one types); empty for counted ones' }),
};
export const ItemGrant = Type.Object(
  { ...grantedFields, alreadyGranted: Type.Boolean({ description: 'true: the grantKey had granted before; the answer is that first grant' }) },
  { additionalProperties: false },
);
const ItemUse = Type.Object(
  { itemTypeKey: Type.String(), item: Type.Union([Item, Type.Null()], { description: 'the item used, now consumed; null when taken from a stack' }) },
  { additionalProperties: false },
);
const ContainerOpening = Type.Object(
  {
    itemTypeKey: Type.String(),
    item: Item,
    granted: Type.Array(Type.Object(grantedFields, { additionalProperties: false }), { description: 'what the container gave, one entry per item type in key order' }),
  },
  { additionalProperties: false },
);

const Quantity = (description: string) => Type.Integer({ minimum: 1, maximum: ITEM_QUANTITY_MAX, description });
const choiceFields = {
  inventoryId: Type.Optional(Id('one of the player’s inventories')),
  realmId: Type.Optional(Type.Union([Id('a realm id'), Type.Null()], { description: 'a realm id, or null for the account' })),
};

const ServerPlayer = Type.Object({ playerId: Id('a player id') }, { additionalProperties: false });
const EitherPlayer = Type.Object({ playerId: Id('a player id, or `me` with a player token') }, { additionalProperties: false });
const ServerItem = Type.Object({ playerId: Id('a player id'), itemId: Id('an item id') }, { additionalProperties: false });
const EitherItem = Type.Object({ playerId: Id('a player id, or `me` with a player token'), itemId: Id('an item id') }, { additionalProperties: false });

export const listItems = defineRoute({
  operationId: 'listItems',
  method: 'GET',
  path: '/players/:playerId/inventories/:inventory/items',
  summary: 'The items an inventory holds one by one and not yet used, in the order granted, with the inventory',
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  params: InventoryParams,
  query: Type.Object(PageQuery, { additionalProperties: false }),
  success: { status: 200, description: 'A page of items', schema: PageOf(Item, { inventory: Inventory }) },
  links: [{ parameters: { playerId: '$request.path.playerId', itemId: '$response.body#/items/0/id' } }],
  refusals: ['forbidden', 'not-found', 'no-current-realm'],
  handler: async (ctx) => ({ body: await ctx.core.items.listItems(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.inventory, ctx.query) }),
});

export const listItemStacks = defineRoute({
  operationId: 'listItemStacks',
  method: 'GET',
  path: '/players/:playerId/inventories/:inventory/item-stacks',
  summary: "An inventory's counted stacks by item type key (empty ones left out), with the inventory",
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  params: InventoryParams,
  query: Type.Object(PageQuery, { additionalProperties: false }),
  success: { status: 200, description: 'A page of stacks', schema: PageOf(Stack, { inventory: Inventory }) },
  refusals: ['forbidden', 'not-found', 'no-current-realm'],
  handler: async (ctx) => ({ body: await ctx.core.items.listStacks(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.inventory, ctx.query) }),
});

export const grantItems = defineRoute({
  operationId: 'grantItems',
  method: 'POST',
  path: '/players/:playerId/items/grant',
  summary: 'Grant items of one type',
  description:
    'Counted types grow their stack; one-by-one types get `quantity` new items. Under a `grantKey` (one-by-one, quantity 1) a second grant answers the first with `alreadyGranted: true`. `owned-limit` past maxOwned (items not consumed, or the stack).',
  tag: 'inventory',
  credential: 'server',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'required',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: ServerPlayer,
  body: Type.Object(
    {
      itemTypeKey: GameKey('the item type key'),
      quantity: Type.Optional(Quantity('1 to 1,000, default 1')),
      grantKey: Type.Optional(GameKey('one-by-one types only, quantity 1: granting again under it answers the first grant')),
      data: Type.Optional(Type.Object({}, { additionalProperties: true, description: `one-by-one types only: the item's own data, at most ${ITEM_DATA_MAX_BYTES} bytes compact` })),
      ...choiceFields,
    },
    { additionalProperties: false },
  ),
  success: { status: 200, description: 'What was granted where', schema: ItemGrant },
  links: [
    { parameters: { playerId: '$request.path.playerId', itemId: '$response.body#/items/0/id' } },
    { parameters: { playerId: '$request.path.playerId', inventory: '$response.body#/inventoryId' } },
  ],
  refusals: ['not-found', 'invalid-request', 'disabled', 'owned-limit', 'no-current-realm'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.grant(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body, ctx.idempotency)),
});

export const consumeItem = defineRoute({
  operationId: 'consumeItem',
  method: 'POST',
  path: '/players/:playerId/items/:itemId/consume',
  summary: 'Take one item away',
  description: 'The item is kept with `consumedAt`; consuming it again is `already-consumed`.',
  tag: 'inventory',
  credential: 'server',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'required',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: ServerItem,
  success: { status: 200, description: 'The item, consumed', schema: Type.Object({ item: Item }, { additionalProperties: false }) },
  refusals: ['not-found', 'already-consumed'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.consumeItem(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.itemId, ctx.idempotency)),
});

export const consumeItemStack = defineRoute({
  operationId: 'consumeItemStack',
  method: 'POST',
  path: '/players/:playerId/item-stacks/consume',
  summary: 'Take from a counted stack',
  description: '`insufficient-balance` (details.held, details.requested) when the stack holds fewer.',
  tag: 'inventory',
  credential: 'server',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'required',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: ServerPlayer,
  body: Type.Object({ itemTypeKey: GameKey('a counted item type key'), quantity: Type.Optional(Quantity('1 to 1,000, default 1')), ...choiceFields }, { additionalProperties: false }),
  success: { status: 200, description: 'The stack after', schema: Type.Object({ stack: Stack }, { additionalProperties: false }) },
  refusals: ['not-found', 'invalid-request', 'insufficient-balance', 'no-current-realm'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.consumeStack(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body, ctx.idempotency)),
});

export const useItem = defineRoute({
  operationId: 'useItem',
  method: 'POST',
  path: '/players/:playerId/items/:itemId/use',
  summary: 'Use, and so consume, one item',
  description: '`not-usable` unless its type is usable; `locked` (details.missing) without the unlocks the type requires.',
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: EitherItem,
  success: { status: 200, description: 'The item used', schema: ItemUse },
  refusals: ['forbidden', 'not-found', 'not-usable', 'locked', 'disabled', 'already-consumed'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.useItem(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.itemId, ctx.idempotency)),
});

export const useItemStack = defineRoute({
  operationId: 'useItemStack',
  method: 'POST',
  path: '/players/:playerId/item-stacks/use',
  summary: 'Use one of a counted stack',
  description: '`insufficient-balance` when the stack is empty.',
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: EitherPlayer,
  body: Type.Object({ itemTypeKey: GameKey('a counted item type key'), ...choiceFields }, { additionalProperties: false }),
  success: { status: 200, description: 'What was used', schema: ItemUse },
  refusals: ['forbidden', 'not-found', 'invalid-request', 'not-usable', 'locked', 'disabled', 'insufficient-balance', 'no-current-realm'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.useStack(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body, ctx.idempotency)),
});

export const openItem = defineRoute({
  operationId: 'openItem',
  method: 'POST',
  path: '/players/:playerId/items/:itemId/open',
  summary: 'Open a container, once, for its contents',
  description:
    'Consumes the container and grants its contents (fixed grants and weighted picks) in one statement; `granted` says what it gave. `not-usable` for anything but a container, or when its contents name a missing or switched-off item type (nothing is consumed then).',
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  // The move's one statement claims and answers the key's record (the money engine): one round trip.
  idempotencyRecord: 'handler',
  params: EitherItem,
  success: { status: 200, description: 'The container opened and what it gave', schema: ContainerOpening },
  refusals: ['forbidden', 'not-found', 'not-usable', 'locked', 'disabled', 'already-consumed', 'owned-limit', 'no-current-realm'],
  handler: async (ctx) => engineAnswer(await ctx.core.items.openContainer(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.itemId, ctx.idempotency)),
});
