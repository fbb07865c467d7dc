/**
 * The CardType and CardTemplate manifests' specs (docs/cards.md "Card types and templates"): what a
 * designer writes, wrapped into their kinds by manifests/schemas.ts like every other spec. Rules
 * within one document are CEL (spec/rules.ts), so the Kubernetes API server and `hearth apply` refuse
 * a bad document alike; rules across documents (a price naming a currency) are checked when a card
 * is bought (docs/cards.md).
 */
import { type Static, Type } from '@sinclair/typebox';
import { celRules, immutable } from './rules';
import { Defaulted, literals } from './fields';
import { EnvironmentReference } from './names';
import { GameKey } from './game-keys';
import { ITEM_TYPE_LIMITS, PRICE_RULES, PriceSpec } from './item-type';

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
    slug: Type.Optional(immutable(GameKey('the card type key clients and servers name it by (cardTypeKey); metadata.name when absent'), { why: 'cards players hold name it' })),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'shown to players' }),
    description: Defaulted(Type.String({ maxLength: 2000, default: '', description: 'shown to players' })),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'switched off: still listed (enabled: false), but not granted or bought (`disabled`), and a problem in a deck' })),
    perDeckLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: CARD_LIMITS.lineCountMax, description: 'the most cards of this type one deck may count (validation problem `per-type-limit`); no limit when absent' })),
    starter: Defaulted(
      Type.Boolean({ default: false, description: 'every player may put this type in decks without holding it (deck validation never says `not-owned` for it)' }),
    ),
    purchasable: Defaulted(Type.Boolean({ default: false, description: 'whether POST .../purchases/cards sells it' })),
    priceRule: Defaulted(literals(PRICE_RULES, { default: 'all', description: '`all`: every price is paid; `any`: the buyer pays one of them (payWith)' })),
    prices: Defaulted(
      Type.Array(PriceSpec, {
        maxItems: CARD_LIMITS.prices,
        default: [],
        description: 'what one card costs (priceRule says whether all or one of them is paid)',
        ...celRules({ rule: 'self.all(p, self.exists_one(q, q.currencyKey == p.currencyKey))', message: 'must name each currency once' }),
      }),
    ),
    data: Type.Optional(Data),
  },
  {
    additionalProperties: false,
    ...celRules(
      { rule: "!has(self.priceRule) || self.priceRule != 'any' || (has(self.prices) && size(self.prices) > 0)", message: 'any needs at least one price', fieldPath: '.priceRule' },
      { rule: '!has(self.purchasable) || !self.purchasable || (has(self.prices) && size(self.prices) > 0)', message: 'needs at least one price for a purchasable card type', fieldPath: '.prices' },
    ),
  },
);

export const CardTemplateSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'cards made with it stay there' }),
    key: Type.Optional(immutable(GameKey('the template key (cardTemplateKey); metadata.name when absent'), { why: 'cards made with it name it' })),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'shown to players' }),
    description: Defaulted(Type.String({ maxLength: 2000, default: '', description: 'shown to players' })),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'switched off: still listed (enabled: false), but no card is granted or bought with it (`disabled`)' })),
    data: Type.Optional(Data),
  },
  { additionalProperties: false },
);

export type CardTypeSpecT = Static<typeof CardTypeSpec>;
export type CardTemplateSpecT = Static<typeof CardTemplateSpec>;
