/**
 * Buying items (spec §4 Game services "Buying", §2 Purchase<T>): POST /players/:playerId/purchases/items.
 * The domain is apps/core/src/items/purchases.ts; docs/economy.md "Buying".
 *
 * Idempotency-Key is optional (either credential): a retry under the same key answers the first
 * purchase with `replayed: true` and `granted: null` (spec Purchase<T>), charging nothing again.
 */
import { Type } from '@sinclair/typebox';
import { GameKey } from '@hearth/core/contract';
import { PURCHASE_QUANTITY_MAX } from '@hearth/core/items';
import { defineRoute } from '../../http/route';
import { Allowances, Id, InventoryChoiceFields, PurchaseOf, ItemGrant } from '@hearth/core/shapes';
import { targetPlayerId } from '../players/target';
import { PURCHASE_REFUSALS, answerWithReplay, engineMove } from '../economy/held';

export const purchaseItems = defineRoute({
  operationId: 'purchaseItems',
  path: '/players/:playerId/purchases/items',
  summary: 'Buy items with currencies',
  description:
    'Charges the item type’s prices (every one for priceRule `all`; the one `payWith` names for `any`), each multiplied by `quantity`, and grants the items, in one transaction: all or nothing. ' +
    'A consumed currency’s price needs its allowance in `allowances` (server key only; from a player token `forbidden`). ' +
    'Under an Idempotency-Key a retry answers the first purchase with `replayed: true` and `granted: null`.',
  ...engineMove('inventory', 'either', 'optional'),
  params: Type.Object({ playerId: Id('a player id, or `me` with a player token') }, { additionalProperties: false }),
  body: Type.Object(
    {
      itemTypeKey: GameKey('the item type to buy'),
      quantity: Type.Optional(
        Type.Integer({ minimum: 1, maximum: PURCHASE_QUANTITY_MAX, description: `1 to ${PURCHASE_QUANTITY_MAX}, default 1: every price is multiplied by it` }),
      ),
      ...InventoryChoiceFields,
      payWith: Type.Optional(GameKey('priceRule `any`: the currency of the price to pay (required there); with `all` it must name one of the prices')),
      allowances: Type.Optional(Allowances),
    },
    { additionalProperties: false },
  ),
  success: { status: 200, description: 'The purchase: its charges and what it granted', schema: PurchaseOf(ItemGrant) },
  links: [
    { parameters: { playerId: '$request.path.playerId', itemId: '$response.body#/granted/items/0/id' } },
    { parameters: { playerId: '$request.path.playerId', inventory: '$response.body#/granted/inventoryId' } },
  ],
  refusals: PURCHASE_REFUSALS,
  handler: async (ctx) =>
    answerWithReplay(await ctx.core.purchases.buyItem(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body, ctx.principal.kind, ctx.idempotency)),
});
