/**
 * Buying cards (spec §4 "Buying", §2 Purchase<T>): POST /players/:playerId/purchases/cards. The domain
 * is apps/core/src/cards/service.ts (one statement of the money engine, hearth_card_purchase);
 * docs/cards.md "Buying cards".
 *
 * Idempotency-Key is optional (either credential): a retry under the same key answers the first
 * purchase with `replayed: true` and `granted: null`, charging nothing again.
 */
import { Type } from '@sinclair/typebox';
import { CARD_PURCHASE_FORMS } from '@hearth/core/cards';
import { CardGrant, CardStack, OneOf, Allowances, InventoryChoiceFields, PlayerPath, PurchaseOf } from '@hearth/core/shapes';
import { GameKey } from '@hearth/core/contract';
import { defineRoute } from '../../http/route';
import { targetPlayerId } from '../players/target';
import { CardData } from './held';
import { PURCHASE_REFUSALS, answerWithReplay, engineMove } from '../economy/held';

export const purchaseCards = defineRoute({
  operationId: 'purchaseCards',
  path: '/players/:playerId/purchases/cards',
  summary: 'Buy a card with currencies',
  description:
    'Charges the card type’s prices (every one for priceRule `all`; the one `payWith` names for `any`) and grants one card (`as: instance`, the default) or one more of the type’s stack (`as: stack`), in one transaction: all or nothing. ' +
    'With neither inventoryId nor realmId the card goes to the current realm’s inventory. ' +
    '`cardTemplateKey`, `data` and `allowances` are a server key’s (from a player token `forbidden`); template and data are for an instance. ' +
    'Under an Idempotency-Key a retry answers the first purchase with `replayed: true` and `granted: null`.',
  ...engineMove('cards', 'either', 'optional'),
  params: PlayerPath,
  body: Type.Object(
    {
      cardTypeKey: GameKey('the card type to buy'),
      as: Type.Optional(
        OneOf(CARD_PURCHASE_FORMS, { description: '`instance` (default): one card with an id; `stack`: one more in the type’s counted stack' }),
      ),
      ...InventoryChoiceFields,
      payWith: Type.Optional(GameKey('priceRule `any`: the currency of the price to pay (required there); with `all` it must name one of the prices')),
      cardTemplateKey: Type.Optional(GameKey('server key only, instance only: the card’s template')),
      data: Type.Optional(CardData),
      allowances: Type.Optional(Allowances),
    },
    { additionalProperties: false },
  ),
  success: {
    status: 200,
    description: 'The purchase: its charges and the card (or the stack after)',
    schema: PurchaseOf(Type.Union([CardGrant, CardStack], { description: 'a card bought as an instance, or the stack after one more' })),
  },
  refusals: PURCHASE_REFUSALS,
  handler: async (ctx) => answerWithReplay(await ctx.core.cards.buy(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body, ctx.principal.kind, ctx.idempotency)),
});
