/**
 * Decks (spec §4 "Cards and decks"): a player's decks, their lines and their validation, either
 * credential (`me` with a player token). The domain is apps/core/src/cards/decks.ts; docs/cards.md "Decks".
 */
import { Type } from '@sinclair/typebox';
import { CARD_LIMITS, GameKey } from '@hearth/core/contract';
import { Deck, DeckValidation, Id, PageOf, PageQuery, PlayerPath, Trimmed } from '@hearth/core/shapes';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { answeredForPlayer, doneForPlayer, targetPlayerId } from '../players/target';

const DeckName = Trimmed({ minLength: 1, maxLength: CARD_LIMITS.deckNameMax, description: `1 to ${CARD_LIMITS.deckNameMax} characters, trimmed` });
const DeckPath = Type.Object({ playerId: Id('a player id, or `me` with a player token'), deckId: Id('a deck id') }, { additionalProperties: false });
const deckRoute = { tag: 'cards' as const, credential: 'either' as const, service: 'cards' as const };
const DeckListQuery = Type.Object({ inventoryId: Type.Optional(Id('only the decks of this inventory')), ...PageQuery }, { additionalProperties: false });
const answersDeck = { status: 200, description: 'The deck after', schema: Deck } as const;

export const listDecks = defineRoute({
  ...deckRoute,
  operationId: 'listDecks',
  method: 'GET',
  path: '/players/:playerId/decks',
  summary: "The player's decks in the order made",
  description:
    "Pages through the player's decks in the order they were made, optionally of one inventory, each with its entries. A player token reads its own (`me`).",
  success: { status: 200, description: 'A page of decks', schema: PageOf(Deck) },
  links: [{ parameters: { playerId: '$request.path.playerId', deckId: '$response.body#/items/0/id' } }],
  ...answeredForPlayer({ params: PlayerPath, query: DeckListQuery }, (ctx, playerId) => ctx.core.decks.list(ctx.db, ctx.env, playerId, ctx.query)),
});

export const createDeck = defineRoute({
  ...deckRoute,
  operationId: 'createDeck',
  method: 'POST',
  path: '/players/:playerId/decks',
  summary: 'Make an empty deck in one of the player’s inventories',
  description: `\`owned-limit\` past ${CARD_LIMITS.decksPerPlayer} decks per player.`,
  params: PlayerPath,
  body: Type.Object({ inventoryId: Id('one of the player’s inventories'), name: DeckName }, { additionalProperties: false }),
  success: { status: 201, description: 'The deck made', schema: Deck },
  links: [{ parameters: { playerId: '$request.path.playerId', deckId: '$response.body#/id' } }],
  refusals: ['forbidden', 'not-found', 'owned-limit'],
  handler: async (ctx) => ({ status: 201, body: await ctx.core.decks.create(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body) }),
});

export const getDeck = defineRoute({
  ...deckRoute,
  operationId: 'getDeck',
  method: 'GET',
  path: '/players/:playerId/decks/:deckId',
  summary: 'One deck with its lines',
  description: 'One deck of the player with its entries (a card type and how many of it). `not-found` when the player has no such deck.',
  success: { status: 200, description: 'The deck', schema: Deck },
  ...answeredForPlayer({ params: DeckPath }, (ctx, playerId) => ctx.core.decks.get(ctx.db, ctx.env, playerId, ctx.params.deckId)),
});

export const renameDeck = defineRoute({
  ...deckRoute,
  operationId: 'renameDeck',
  method: 'PATCH',
  path: '/players/:playerId/decks/:deckId',
  summary: 'Rename a deck',
  description: "Changes the deck's name only; its entries are set by their own routes. `not-found` when the player has no such deck.",
  success: answersDeck,
  ...answeredForPlayer({ params: DeckPath, body: Type.Object({ name: DeckName }, { additionalProperties: false }) }, (ctx, playerId) =>
    ctx.core.decks.rename(ctx.db, ctx.env, playerId, ctx.params.deckId, ctx.body.name),
  ),
});

export const deleteDeck = defineRoute({
  ...deckRoute,
  operationId: 'deleteDeck',
  method: 'DELETE',
  path: '/players/:playerId/decks/:deckId',
  summary: 'Delete a deck (its cards stay the player’s)',
  description: "Removes the deck and its entries; the cards it counted stay in the player's inventory. `not-found` when the player has no such deck.",
  success: { status: 204, description: 'Deleted' },
  ...doneForPlayer({ params: DeckPath }, (ctx, playerId) => ctx.core.decks.delete(ctx.db, ctx.env, playerId, ctx.params.deckId)),
});

const DeckCardPath = Type.Object(
  { playerId: Id('a player id, or `me` with a player token'), deckId: Id('a deck id'), cardId: Id('a card id') },
  { additionalProperties: false },
);

export const putDeckCard = defineRoute({
  ...deckRoute,
  operationId: 'putDeckCard',
  method: 'PUT',
  path: '/players/:playerId/decks/:deckId/cards/:cardId',
  summary: 'Put one of the player’s cards in a deck',
  description: `The card must be held in the deck’s inventory and not consumed; one already in the deck changes nothing. \`owned-limit\` past ${CARD_LIMITS.deckLines} lines.`,
  params: DeckCardPath,
  success: answersDeck,
  refusals: ['forbidden', 'not-found', 'invalid-request', 'already-consumed', 'owned-limit'],
  handler: async (ctx) => ({ body: await ctx.core.decks.putCard(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.deckId, ctx.params.cardId) }),
});

export const takeDeckCard = defineRoute({
  ...deckRoute,
  operationId: 'takeDeckCard',
  method: 'DELETE',
  path: '/players/:playerId/decks/:deckId/cards/:cardId',
  summary: 'Take a card out of a deck',
  description: 'Done whether or not the deck held it; answers the deck.',
  success: answersDeck,
  ...answeredForPlayer({ params: DeckCardPath }, (ctx, playerId) => ctx.core.decks.takeCard(ctx.db, ctx.env, playerId, ctx.params.deckId, ctx.params.cardId)),
});

export const setDeckType = defineRoute({
  ...deckRoute,
  operationId: 'setDeckType',
  method: 'PUT',
  path: '/players/:playerId/decks/:deckId/types/:cardTypeKey',
  summary: 'Set how many cards of a type a deck counts',
  description: `\`count\` 0 to ${CARD_LIMITS.lineCountMax}; 0 removes the line. The type must be defined. \`owned-limit\` past ${CARD_LIMITS.deckLines} lines.`,
  params: Type.Object(
    { playerId: Id('a player id, or `me` with a player token'), deckId: Id('a deck id'), cardTypeKey: GameKey('a card type key') },
    { additionalProperties: false },
  ),
  body: Type.Object(
    { count: Type.Integer({ minimum: 0, maximum: CARD_LIMITS.lineCountMax, description: '0 removes the line' }) },
    { additionalProperties: false },
  ),
  success: answersDeck,
  refusals: ['forbidden', 'not-found', 'owned-limit'],
  handler: async (ctx) => ({
    body: await ctx.core.decks.setTypeCount(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.deckId, ctx.params.cardTypeKey, ctx.body.count),
  }),
});

const DeckValidationQuery = Type.Object(
  {
    maxSize: Type.Optional(
      Type.Integer({ minimum: 1, maximum: CARD_LIMITS.deckLines * CARD_LIMITS.lineCountMax, description: 'the most cards the deck may count' }),
    ),
  },
  { additionalProperties: false },
);

export const validateDeck = defineRoute({
  ...deckRoute,
  operationId: 'validateDeck',
  method: 'GET',
  path: '/players/:playerId/decks/:deckId/validation',
  summary: 'Whether a deck is playable, and its problems',
  description: 'Problem codes: `size` (past `maxSize`), `per-type-limit`, `not-owned` (never for a starter type), `unknown-card-type`, `disabled-card-type`.',
  success: { status: 200, description: 'The validation', schema: DeckValidation },
  ...answeredForPlayer({ params: DeckPath, query: DeckValidationQuery }, (ctx, playerId) =>
    ctx.core.decks.validate(ctx.db, ctx.env, playerId, ctx.params.deckId, ctx.query.maxSize),
  ),
});
