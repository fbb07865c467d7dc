/**
 * Cards players hold (spec §4 "Cards and decks"): the lists of an inventory's cards and card stacks,
 * a card's grant and consumption, a stack's grant and consumption. The domain is
 * apps/core/src/cards/service.ts; docs/cards.md.
 *
 * Idempotency-Key: required on the stacks' grant and consumption (a retry must not count twice);
 * optional on a card's grant (its grantKey already makes a grant once) and consumption (a second is
 * `already-consumed`), where a retry under the key answers the first answer.
 */
import { Type } from '@sinclair/typebox';
import { CARD_LIMITS, GameKey } from '@hearth/core/contract';
import { Card, CardGrant, CardStack, Id, InventoryChoiceFields, ServerPlayerPath } from '@hearth/core/shapes';
import { defineRoute } from '../../http/route';
import { inventoryPage, playerEngineMove } from '../economy/held';

/** A card's own data (spec §8: up to 1 KB compact, checked by core). */
export const CardData = Type.Object({}, { additionalProperties: true, description: `the card's own data, at most ${CARD_LIMITS.dataBytes} bytes compact` });

const StackBody = Type.Object(
  {
    cardTypeKey: GameKey('the card type key'),
    quantity: Type.Integer({ minimum: 1, maximum: CARD_LIMITS.quantityMax, description: `1 to ${CARD_LIMITS.quantityMax}` }),
    ...InventoryChoiceFields,
  },
  { additionalProperties: false },
);

export const listCards = inventoryPage(
  'cards',
  {
    operationId: 'listCards',
    path: '/players/:playerId/inventories/:inventory/cards',
    summary: 'The cards an inventory holds one by one and not consumed, in the order granted, with the inventory',
    description:
      'Pages through the cards the inventory holds one by one (card types with instances) and has not consumed, oldest grant first, with the inventory. Counted card types are read as card stacks instead.',
    item: Card,
    pageOf: 'cards',
    links: [{ parameters: { playerId: '$request.path.playerId', cardId: '$response.body#/items/0/id' } }],
  },
  (core, ...read) => core.cards.listCards(...read),
);

export const listCardStacks = inventoryPage(
  'cards',
  {
    operationId: 'listCardStacks',
    path: '/players/:playerId/inventories/:inventory/card-stacks',
    summary: "An inventory's counted card stacks by card type key (empty ones left out), with the inventory",
    description: "Pages through the inventory's counted card stacks by card type key, leaving out stacks at zero, with the inventory.",
    item: CardStack,
    pageOf: 'card stacks',
  },
  (core, ...read) => core.cards.listStacks(...read),
);

const GrantCardBody = Type.Object(
  {
    cardTypeKey: GameKey('the card type key'),
    cardTemplateKey: Type.Optional(GameKey('a card template key')),
    grantKey: Type.Optional(GameKey('granting again under it answers the first grant')),
    data: Type.Optional(CardData),
    ...InventoryChoiceFields,
  },
  { additionalProperties: false },
);

export const grantCard = defineRoute({
  operationId: 'grantCard',
  path: '/players/:playerId/cards/grant',
  summary: 'Grant one card',
  description:
    'With neither inventoryId nor realmId the card goes to the current realm’s inventory. Under a `grantKey` a second grant answers the first card with `alreadyGranted: true`. `disabled` for a switched-off card type or template.',
  ...playerEngineMove('cards', 'server', 'optional', { params: ServerPlayerPath, body: GrantCardBody }, (ctx, playerId) =>
    ctx.core.cards.grant(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'The card granted (or granted first under the grantKey)', schema: CardGrant },
  links: [{ parameters: { playerId: '$request.path.playerId', cardId: '$response.body#/card/id' } }],
  refusals: ['not-found', 'invalid-request', 'disabled', 'no-current-realm'],
});

const CardPath = Type.Object({ playerId: Id('a player id'), cardId: Id('a card id') }, { additionalProperties: false });

export const consumeCard = defineRoute({
  operationId: 'consumeCard',
  path: '/players/:playerId/cards/:cardId/consume',
  summary: 'Take one card away, and out of every deck',
  description: 'The card is kept with `consumedAt`; consuming it again is `already-consumed`.',
  ...playerEngineMove('cards', 'server', 'optional', { params: CardPath }, (ctx, playerId) =>
    ctx.core.cards.consume(ctx.db, ctx.env, playerId, ctx.params.cardId, ctx.idempotency),
  ),
  success: { status: 200, description: 'The card, consumed', schema: Card },
  refusals: ['not-found', 'already-consumed'],
});

export const grantCardStack = defineRoute({
  operationId: 'grantCardStack',
  path: '/players/:playerId/card-stacks/grant',
  summary: 'Add to a counted card stack',
  description: 'With neither inventoryId nor realmId the stack is the current realm’s inventory’s. `disabled` for a switched-off card type.',
  ...playerEngineMove('cards', 'server', 'required', { params: ServerPlayerPath, body: StackBody }, (ctx, playerId) =>
    ctx.core.cards.grantStack(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'The stack after', schema: CardStack },
  refusals: ['not-found', 'invalid-request', 'disabled', 'owned-limit', 'no-current-realm'],
});

export const consumeCardStack = defineRoute({
  operationId: 'consumeCardStack',
  path: '/players/:playerId/card-stacks/consume',
  summary: 'Take from a counted card stack',
  description: '`insufficient-balance` (details.held, details.requested) when the stack holds fewer.',
  ...playerEngineMove('cards', 'server', 'required', { params: ServerPlayerPath, body: StackBody }, (ctx, playerId) =>
    ctx.core.cards.consumeStack(ctx.db, ctx.env, playerId, ctx.body, ctx.idempotency),
  ),
  success: { status: 200, description: 'The stack after', schema: CardStack },
  refusals: ['not-found', 'invalid-request', 'insufficient-balance', 'no-current-realm'],
});
