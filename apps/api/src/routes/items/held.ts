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
import { ContainerOpening, Item, ItemGrant, ItemStack, ItemUse, Id, InventoryChoiceFields, PlayerPath, ServerPlayerPath } from '@hearth/core/shapes';
import { GameKey } from '@hearth/core/contract';
import { ITEM_DATA_MAX_BYTES, ITEM_QUANTITY_MAX } from '@hearth/core/items';
import { defineRoute } from '../../http/route';
import { inventoryPage, playerEngineMove } from '../economy/held';

const Quantity = (description: string) => Type.Integer({ minimum: 1, maximum: ITEM_QUANTITY_MAX, description });

const ServerItem = Type.Object({ playerId: Id('a player id'), itemId: Id('an item id') }, { additionalProperties: false });
const EitherItem = Type.Object({ playerId: Id('a player id, or `me` with a player token'), itemId: Id('an item id') }, { additionalProperties: false });

export const listItems = inventoryPage(
  'inventory',
  {
    operationId: 'listItems',
    path: '/players/:playerId/inventories/:inventory/items',
    summary: 'The items an inventory holds one by one and not yet used, in the order granted, with the inventory',
    description:
      'Pages through the items the inventory holds one by one (item types with instances) and has not used, oldest grant first, with the inventory. Counted item types are read as stacks instead.',
    item: Item,
    pageOf: 'items',
    links: [{ parameters: { playerId: '$request.path.playerId', itemId: '$response.body#/items/0/id' } }],
  },
  (core, ...read) => core.items.listItems(...read),
);

export const listItemStacks = inventoryPage(
  'inventory',
  {
    operationId: 'listItemStacks',
    path: '/players/:playerId/inventories/:inventory/item-stacks',
    summary: "An inventory's counted stacks by item type key (empty ones left out), with the inventory",
    description:
      "Pages through the inventory's counted item stacks by item type key, leaving out stacks at zero, with the inventory. Items held one by one are read as items instead.",
    item: ItemStack,
    pageOf: 'stacks',
  },
  (core, ...read) => core.items.listStacks(...read),
);

const GrantItemsBody = Type.Object(
  {
    itemTypeKey: GameKey('the item type key'),
    quantity: Type.Optional(Quantity('1 to 1,000, default 1')),
    grantKey: Type.Optional(GameKey('one-by-one types only, quantity 1: granting again under it answers the first grant')),
    data: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: `one-by-one types only: the item's own data, at most ${ITEM_DATA_MAX_BYTES} bytes compact` }),
    ),
    ...InventoryChoiceFields,
  },
  { additionalProperties: false },
);

export const grantItems = defineRoute({
  operationId: 'grantItems',
  path: '/players/:playerId/items/grant',
  summary: 'Grant items of one type',
  description:
    'Counted types grow their stack; one-by-one types get `quantity` new items. Under a `grantKey` (one-by-one, quantity 1) a second grant answers the first with `alreadyGranted: true`. `owned-limit` past maxOwned (items not consumed, or the stack).',
  ...playerEngineMove('inventory', 'server', 'required', { params: ServerPlayerPath, body: GrantItemsBody }, (ctx, playerId) =>
    ctx.core.items.grant(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'What was granted where', schema: ItemGrant },
  links: [
    { parameters: { playerId: '$request.path.playerId', itemId: '$response.body#/items/0/id' } },
    { parameters: { playerId: '$request.path.playerId', inventory: '$response.body#/inventoryId' } },
  ],
  refusals: ['not-found', 'invalid-request', 'disabled', 'owned-limit', 'no-current-realm'],
});

export const consumeItem = defineRoute({
  operationId: 'consumeItem',
  path: '/players/:playerId/items/:itemId/consume',
  summary: 'Take one item away',
  description: 'The item is kept with `consumedAt`; consuming it again is `already-consumed`.',
  ...playerEngineMove('inventory', 'server', 'required', { params: ServerItem }, (ctx, playerId) =>
    ctx.core.items.consumeItem(ctx.db, ctx.env, playerId, ctx.params.itemId, ctx.idempotency),
  ),
  success: { status: 200, description: 'The item, consumed', schema: Type.Object({ item: Item }, { additionalProperties: false }) },
  refusals: ['not-found', 'already-consumed'],
});

const ConsumeItemStackBody = Type.Object(
  { itemTypeKey: GameKey('a counted item type key'), quantity: Type.Optional(Quantity('1 to 1,000, default 1')), ...InventoryChoiceFields },
  { additionalProperties: false },
);

export const consumeItemStack = defineRoute({
  operationId: 'consumeItemStack',
  path: '/players/:playerId/item-stacks/consume',
  summary: 'Take from a counted stack',
  description: '`insufficient-balance` (details.held, details.requested) when the stack holds fewer.',
  ...playerEngineMove('inventory', 'server', 'required', { params: ServerPlayerPath, body: ConsumeItemStackBody }, (ctx, playerId) =>
    ctx.core.items.consumeStack(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'The stack after', schema: Type.Object({ stack: ItemStack }, { additionalProperties: false }) },
  refusals: ['not-found', 'invalid-request', 'insufficient-balance', 'no-current-realm'],
});

export const useItem = defineRoute({
  operationId: 'useItem',
  path: '/players/:playerId/items/:itemId/use',
  summary: 'Use, and so consume, one item',
  description: '`not-usable` unless its type is usable; `locked` (details.missing) without the unlocks the type requires.',
  ...playerEngineMove('inventory', 'either', 'optional', { params: EitherItem }, (ctx, playerId) =>
    ctx.core.items.useItem(ctx.db, ctx.env, playerId, ctx.params.itemId, ctx.idempotency),
  ),
  success: { status: 200, description: 'The item used', schema: ItemUse },
  refusals: ['forbidden', 'not-found', 'not-usable', 'locked', 'disabled', 'already-consumed'],
});

const UseItemStackBody = Type.Object({ itemTypeKey: GameKey('a counted item type key'), ...InventoryChoiceFields }, { additionalProperties: false });

export const useItemStack = defineRoute({
  operationId: 'useItemStack',
  path: '/players/:playerId/item-stacks/use',
  summary: 'Use one of a counted stack',
  description: '`insufficient-balance` when the stack is empty.',
  ...playerEngineMove('inventory', 'either', 'optional', { params: PlayerPath, body: UseItemStackBody }, (ctx, playerId) =>
    ctx.core.items.useStack(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'What was used', schema: ItemUse },
  refusals: ['forbidden', 'not-found', 'invalid-request', 'not-usable', 'locked', 'disabled', 'insufficient-balance', 'no-current-realm'],
});

export const openItem = defineRoute({
  operationId: 'openItem',
  path: '/players/:playerId/items/:itemId/open',
  summary: 'Open a container, once, for its contents',
  description:
    'Consumes the container and grants its contents (fixed grants and weighted picks) in one statement; `granted` says what it gave. `not-usable` for anything but a container, or when its contents name a missing or switched-off item type (nothing is consumed then).',
  ...playerEngineMove('inventory', 'either', 'optional', { params: EitherItem }, (ctx, playerId) =>
    ctx.core.items.openContainer(ctx.db, ctx.env, playerId, ctx.params.itemId, ctx.idempotency),
  ),
  success: { status: 200, description: 'The container opened and what it gave', schema: ContainerOpening },
  refusals: ['forbidden', 'not-found', 'not-usable', 'locked', 'disabled', 'already-consumed', 'owned-limit', 'no-current-realm'],
});
