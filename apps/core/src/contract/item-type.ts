/**
 * The ItemType manifest's spec (docs/economy.md "Item types"): one item type of an environment, as a
 * designer writes it. A value schema of the spec layer, wrapped into its kind by manifests/kinds/items.ts
 * like every other spec. Rules across fields of one document are CEL (spec/rules.ts), so the
 * Kubernetes API server and `hearth apply` refuse a bad document alike; rules across documents (a
 * price naming a currency, a container naming an item type) are checked when the item is bought or
 * opened (docs/economy.md).
 */
import { Type } from '@sinclair/typebox';
import { type CelRule, celRules, immutable } from './rules';
import { Reference } from './names';
import { Defaulted, Icon, KeyList, ShownDescription, ShownName, literals } from './fields';
import { AMOUNT_MAX, GameKey } from './game-keys';

/** Spec §8: amounts 1 to 1,000,000,000; quantities 1 to 1,000; item `data` up to 1 KB compact. */
export const ITEM_TYPE_LIMITS = {
  amountMax: AMOUNT_MAX,
  quantityMax: 1000,
  dataBytes: 1024,
  prices: 10,
  requires: 20,
  contentGrants: 20,
  contentPicks: 10,
  pickCount: 10,
  pickEntries: 50,
  weightMax: 1_000_000,
  maxOwnedMax: 1_000_000_000,
} as const;

/** The category whose items are opened (POST .../items/:itemId/open) for their contents. */
export const CONTAINER_CATEGORY = 'container';
export const ITEM_OWNERSHIPS = ['one-by-one', 'counted'] as const;
export const ITEM_SCOPES = ['account', 'realm'] as const;
export const PRICE_RULES = ['all', 'any'] as const;

const L = ITEM_TYPE_LIMITS;

export const PriceSpec = Type.Object(
  {
    currencyKey: GameKey('a Currency of the same environment'),
    amount: Type.Integer({ minimum: 1, maximum: L.amountMax, description: 'per item; a purchase multiplies it by its quantity' }),
  },
  { additionalProperties: false },
);

/**
 * What one of something costs (an item, a card, a skill node's unlock): `priceRule` and up to `max`
 * prices, each currency once. The object holding them carries ANY_NEEDS_A_PRICE.
 */
export function priceFields(max: number, payer: 'buyer' | 'player', whatItCosts: string) {
  return {
    priceRule: Defaulted(
      literals(PRICE_RULES, { default: 'all', description: `\`all\`: every price is paid; \`any\`: the ${payer} pays one of them (payWith)` }),
    ),
    prices: Defaulted(
      Type.Array(PriceSpec, {
        maxItems: max,
        default: [],
        description: `${whatItCosts} (priceRule says whether all or one of them is paid)`,
        ...celRules({ rule: 'self.all(p, self.exists_one(q, q.currencyKey == p.currencyKey))', message: 'must name each currency once' }),
      }),
    ),
  };
}

/** The rule of priceFields' object: `any` price rule needs a price to choose from. */
export const ANY_NEEDS_A_PRICE: CelRule = {
  rule: "!has(self.priceRule) || self.priceRule != 'any' || (has(self.prices) && size(self.prices) > 0)",
  message: 'any needs at least one price',
  fieldPath: '.priceRule',
};

/** What is sold (`purchasable`) needs a price. */
export const purchasableNeedsAPrice = (what: string): CelRule => ({
  rule: '!has(self.purchasable) || !self.purchasable || (has(self.prices) && size(self.prices) > 0)',
  message: `needs at least one price for a purchasable ${what}`,
  fieldPath: '.prices',
});

const ContentGrant = Type.Object(
  {
    itemTypeKey: GameKey('the item type granted'),
    quantity: Type.Integer({ minimum: 1, maximum: L.quantityMax, default: 1, description: 'how many are granted' }),
  },
  { additionalProperties: false },
);

const PickEntry = Type.Object(
  {
    itemTypeKey: GameKey('the item type this entry grants when drawn'),
    quantity: Type.Integer({ minimum: 1, maximum: L.quantityMax, default: 1, description: 'how many are granted when drawn' }),
    weight: Type.Integer({ minimum: 1, maximum: L.weightMax, default: 1, description: 'drawn with probability weight / sum of the weights of `from`' }),
  },
  { additionalProperties: false },
);

const Pick = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: L.pickCount, default: 1, description: 'how many draws; each draw is independent (an entry can come up again)' }),
    from: Type.Array(PickEntry, { minItems: 1, maxItems: L.pickEntries, description: 'the entries each draw picks one of' }),
  },
  { additionalProperties: false },
);

export const ContainerContentsSpec = Type.Object(
  {
    grants: Type.Optional(Type.Array(ContentGrant, { maxItems: L.contentGrants, description: 'always granted on opening' })),
    picks: Type.Optional(Type.Array(Pick, { maxItems: L.contentPicks, description: 'weighted draws made on opening' })),
  },
  {
    additionalProperties: false,
    description: 'what opening a container grants, in the same transaction',
    ...celRules({
      rule: '(has(self.grants) && size(self.grants) > 0) || (has(self.picks) && size(self.picks) > 0)',
      message: 'must hold at least one grant or pick',
    }),
  },
);

export const ItemTypeSpec = Type.Object(
  {
    environment: immutable(Reference('GameEnvironment', 'the GameEnvironment of this namespace it belongs to'), { why: 'items players hold stay there' }),
    key: Type.Optional(immutable(GameKey('the key clients and servers name it by; metadata.name when absent'), { why: 'items players hold name it' })),
    name: ShownName(),
    description: ShownDescription(),
    icon: Icon(),
    category: GameKey('a free key of the game (weapon, cosmetic...); `container` items are opened for their contents'),
    ownership: literals(ITEM_OWNERSHIPS, { description: '`one-by-one`: each item has an id (and may carry data); `counted`: a quantity in a stack' }),
    scope: Defaulted(
      literals(ITEM_SCOPES, { default: 'account', description: 'where granted items go when no inventory is named: the account, or the current realm' }),
    ),
    enabled: Defaulted(
      Type.Boolean({ default: true, description: 'switched off: still listed (enabled: false), but not granted, bought, used or opened (`disabled`)' }),
    ),
    usable: Defaulted(Type.Boolean({ default: false, description: 'whether POST .../use may use (and so consume) it' })),
    purchasable: Defaulted(Type.Boolean({ default: false, description: 'whether POST .../purchases/items sells it' })),
    maxOwned: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: L.maxOwnedMax,
        description: 'the most one inventory may hold (items not yet consumed, or the stack); no limit when absent',
      }),
    ),
    ...priceFields(L.prices, 'buyer', 'what one item costs'),
    data: Type.Optional(Type.Object({}, { additionalProperties: true, description: `any JSON object the game reads, up to ${L.dataBytes} bytes compact` })),
    contents: Type.Optional(ContainerContentsSpec),
    requires: KeyList(GameKey('an unlock key'), 'unlock', {
      maxItems: L.requires,
      description: 'unlocks the player must hold to use or open it (`locked` with details.missing otherwise)',
    }),
  },
  {
    additionalProperties: false,
    // Rules within one document (docs/economy.md "Item types").
    ...celRules(
      { rule: "self.category == 'container' || !has(self.contents)", message: 'is only for an item type of category container', fieldPath: '.contents' },
      { rule: "self.category != 'container' || has(self.contents)", message: 'is required for a container', fieldPath: '.contents' },
      {
        rule: "self.category != 'container' || self.ownership == 'one-by-one'",
        message: 'must be one-by-one for a container (each one is opened once, by its id)',
        fieldPath: '.ownership',
      },
      {
        rule: "self.category != 'container' || !has(self.usable) || !self.usable",
        message: 'is not for a container, which is opened rather than used',
        fieldPath: '.usable',
      },
      ANY_NEEDS_A_PRICE,
      purchasableNeedsAPrice('item type'),
    ),
  },
);
