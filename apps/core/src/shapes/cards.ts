import { Type, type Static } from '@sinclair/typebox';
import { PRICE_RULES } from '../contract/item-type';
import { Figure, Nullable, OneOf, Shape, Timestamp } from './common';
import { Price } from './items';

/** Card (spec §2). */
export const Card = Shape('Card', {
  id: Type.String(),
  inventoryId: Type.String(),
  cardTypeKey: Type.String(),
  cardTemplateKey: Nullable(Type.String()),
  grantKey: Nullable(Type.String()),
  consumedAt: Nullable(Timestamp),
  data: Type.Object({}, { additionalProperties: true }),
});
export type Card = Static<typeof Card>;

/** Stack (cards) (spec §2): a counted stack of one card type in one inventory. A quantity is exact: never past 2^53-1. */
export const CardStack = Shape('CardStack', { inventoryId: Type.String(), cardTypeKey: Type.String(), quantity: Figure() });
export type CardStack = Static<typeof CardStack>;

/** POST /players/:playerId/cards/grant's answer, and what a card purchase grants. */
export const CardGrant = Shape('CardGrant', {
  card: Card,
  alreadyGranted: Type.Boolean({ description: 'true: the grantKey had granted before; the card is that first grant' }),
});
export type CardGrant = Static<typeof CardGrant>;

/** A card type (spec §2 "Card type definition", §4 Definitions; docs/cards.md): every field always present. */
export const CardTypeDefinition = Shape('CardTypeDefinition', {
  key: Type.String({ description: 'the card type key (cardTypeKey); the same as slug' }),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean({ description: 'false: listed, but not granted or bought, and a problem in a deck' }),
  perDeckLimit: Nullable(Type.Integer({ minimum: 1 }), { description: 'the most one deck may count of it; null: no limit' }),
  starter: Type.Boolean({ description: 'every player may put it in decks without holding it' }),
  purchasable: Type.Boolean(),
  priceRule: OneOf(PRICE_RULES),
  prices: Type.Array(Price),
  data: Type.Object({}, { additionalProperties: true }),
});
export type CardTypeDefinition = Static<typeof CardTypeDefinition>;

/** A card template (spec §2 "Card template"). */
export const CardTemplateDefinition = Shape('CardTemplateDefinition', {
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean(),
  data: Type.Object({}, { additionalProperties: true }),
});
export type CardTemplateDefinition = Static<typeof CardTemplateDefinition>;

/** One line of a deck: a card by id, or a count of a card type. */
export const DeckEntry = Shape('DeckEntry', {
  id: Type.String(),
  cardId: Nullable(Type.String()),
  cardTypeKey: Nullable(Type.String()),
  count: Type.Integer({ minimum: 1, maximum: 1000 }),
});
export type DeckEntry = Static<typeof DeckEntry>;

/** Deck (spec §2). */
export const Deck = Shape('Deck', {
  id: Type.String(),
  inventoryId: Type.String(),
  name: Type.String(),
  entries: Type.Array(DeckEntry),
});
export type Deck = Static<typeof Deck>;

export const DECK_PROBLEM_CODES = ['size', 'per-type-limit', 'not-owned', 'unknown-card-type', 'disabled-card-type'] as const;

/** One thing wrong with a deck (spec §4 deck validation), as the validation lists it and as a refusal's `details.problems` would. */
export const DeckProblem = Shape('DeckProblem', {
  code: OneOf(DECK_PROBLEM_CODES),
  message: Type.String(),
  cardTypeKey: Type.Optional(Type.String()),
  cardId: Type.Optional(Type.String()),
});
export type DeckProblem = Static<typeof DeckProblem>;

/** GET .../decks/:deckId/validation's answer. */
export const DeckValidation = Shape('DeckValidation', {
  valid: Type.Boolean(),
  size: Type.Integer({ minimum: 0, description: 'the cards the deck counts' }),
  problems: Type.Array(DeckProblem),
});
export type DeckValidation = Static<typeof DeckValidation>;
