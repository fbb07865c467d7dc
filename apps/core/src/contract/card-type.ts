/**
 * The CardType and CardTemplate manifests' specs (docs/cards.md "Card types and templates"): what a
 * designer writes, wrapped into their kinds by manifests/kinds/cards.ts like every other spec. Rules
 * within one document are CEL (spec/rules.ts), so the Kubernetes API server and `hearth apply` refuse
 * a bad document alike; rules across documents (a price naming a currency) are checked when a card
 * is bought (docs/cards.md).
 */
import { type Static, Type } from '@sinclair/typebox';
import { celRules, immutable } from './rules';
import { Defaulted, ShownDescription, ShownName } from './fields';
import { EnvironmentReference } from './names';
import { GameKey } from './game-keys';
import { ANY_NEEDS_A_PRICE, ITEM_TYPE_LIMITS, priceFields, purchasableNeedsAPrice } from './item-type';

/** Spec §8: card `data` up to 1 KB compact; quantities 1 to 1,000; decks 50 per player, 200 lines, a line 0-1000. */
export const CARD_LIMITS = {
  dataBytes: ITEM_TYPE_LIMITS.dataBytes,
  quantityMax: 1000,
  prices: ITEM_TYPE_LIMITS.prices,
  decksPerPlayer: 50,
  deckLines: 200,
  lineCountMax: 1000,
  deckNameMax: 60,
} as const;

const Data = Type.Object({}, { additionalProperties: true, description: `any JSON object the game reads, up to ${CARD_LIMITS.dataBytes} bytes compact` });

export const CardTypeSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'cards players hold stay there' }),
    slug: Type.Optional(
      immutable(GameKey('the card type key clients and servers name it by (cardTypeKey); metadata.name when absent'), { why: 'cards players hold name it' }),
    ),
    name: ShownName(),
    description: ShownDescription(),
    enabled: Defaulted(
      Type.Boolean({
        default: true,
        description: 'switched off: still listed (enabled: false), but not granted or bought (`disabled`), and a problem in a deck',
      }),
    ),
    perDeckLimit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: CARD_LIMITS.lineCountMax,
        description: 'the most cards of this type one deck may count (validation problem `per-type-limit`); no limit when absent',
      }),
    ),
    starter: Defaulted(
      Type.Boolean({
        default: false,
        description: 'every player may put this type in decks without holding it (deck validation never says `not-owned` for it)',
      }),
    ),
    purchasable: Defaulted(Type.Boolean({ default: false, description: 'whether POST .../purchases/cards sells it' })),
    ...priceFields(CARD_LIMITS.prices, 'buyer', 'what one card costs'),
    data: Type.Optional(Data),
  },
  {
    additionalProperties: false,
    ...celRules(ANY_NEEDS_A_PRICE, purchasableNeedsAPrice('card type')),
  },
);

export const CardTemplateSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'cards made with it stay there' }),
    key: Type.Optional(immutable(GameKey('the template key (cardTemplateKey); metadata.name when absent'), { why: 'cards made with it name it' })),
    name: ShownName(),
    description: ShownDescription(),
    enabled: Defaulted(
      Type.Boolean({ default: true, description: 'switched off: still listed (enabled: false), but no card is granted or bought with it (`disabled`)' }),
    ),
    data: Type.Optional(Data),
  },
  { additionalProperties: false },
);

export type CardTypeSpecT = Static<typeof CardTypeSpec>;
export type CardTemplateSpecT = Static<typeof CardTemplateSpec>;
