import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Change, Figure, Id, InventoryChoiceFields, Nullable, OneOf, PageQuery, Shape, Timestamp } from './common';
import { Amount, GAME_KEY_PATTERN, GameKey, MAX_BALANCE } from '../contract/game-keys';
import { ENGINE_REASONS } from '../contract/ledger-reasons';

/** Inventory (spec §2): realmId null for the account inventory. */
export const Inventory = Shape('Inventory', { id: Type.String(), realmId: Nullable(Type.String()) });
export type Inventory = Static<typeof Inventory>;

/** Realm (spec §2). Its id is its key: stable across re-applies, so an inventory's realmId keeps its meaning. */
export const Realm = Shape('Realm', {
  id: Type.String(),
  number: Type.Integer({ minimum: 0 }),
  key: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  visible: Type.Boolean(),
  startAt: Timestamp,
  endAt: Nullable(Timestamp),
});
export type Realm = Static<typeof Realm>;

export const CURRENCY_SCOPES = ['account', 'realm'] as const;
export const CURRENCY_KINDS = ['balance', 'consumed'] as const;

/** A currency definition (spec §2 currency definition fields, plus `enabled`). */
export const CurrencyDefinition = Shape('CurrencyDefinition', {
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  icon: Nullable(Type.String()),
  scope: OneOf(CURRENCY_SCOPES),
  kind: OneOf(CURRENCY_KINDS),
  max: Nullable(Figure(), { description: 'the most the stored figure may reach; null: no maximum of its own (2^53-1 holds anyway)' }),
  enabled: Type.Boolean(),
});
export type CurrencyDefinition = Static<typeof CurrencyDefinition>;

export const Balance = Shape('Balance', { currencyKey: Type.String(), amount: Figure() });
export type Balance = Static<typeof Balance>;

export const LedgerEntry = Shape('LedgerEntry', {
  id: Type.String(),
  inventoryId: Type.String(),
  currencyKey: Type.String(),
  amount: Change(),
  balanceAfter: Figure(),
  reason: Type.String(),
  reference: Nullable(Type.String()),
  createdAt: Timestamp,
});
export type LedgerEntry = Static<typeof LedgerEntry>;

/** Movement (spec §2): amount is the signed change to the stored figure. */
export const Movement = Shape('Movement', {
  transactionId: Type.String({ description: 'the id of the ledger entry the move wrote' }),
  inventoryId: Type.String(),
  currencyKey: Type.String(),
  amount: Change(),
  balanceAfter: Figure('for a consumed currency, what has been spent'),
  replayed: Type.Boolean(),
});
export type Movement = Static<typeof Movement>;

/** At most this many allowances in one body: a server may send its whole allowance map, bounded. */
const ALLOWANCES_MAX = 100;

/** A purchase's `allowances` (server key only): the most the player may have spent in all, per consumed currency key. */
export const Allowances = Type.Record(Type.String({ pattern: GAME_KEY_PATTERN }), Type.Integer({ minimum: 0, maximum: MAX_BALANCE }), {
  maxProperties: ALLOWANCES_MAX,
  // A Record's pattern only types the keys that match it: without this, a key outside the
  // game-key pattern passed unchecked (test/security/api3 found it).
  additionalProperties: false,
  description: 'server key only: per consumed currency key, the most the player may have spent in all after the purchase',
});

/** Purchase<T> (spec §2): the answer of every purchase (items, cards). */
export const PurchaseOf = (granted: TSchema) =>
  Type.Object(
    {
      replayed: Type.Boolean({ description: 'true when the Idempotency-Key named a purchase already made' }),
      charges: Type.Array(Movement, { description: 'one Movement per currency charged, in currency-key order' }),
      granted: Type.Union([granted, Type.Null()], { description: 'what was granted; null when replayed' }),
    },
    { additionalProperties: false },
  );

// What callers send: declared once, for the route's validation and the document, and the service's types.

/** Where a body puts or takes something: what the bodies that spread InventoryChoiceFields carry. */
export type InventoryChoice = Static<TObject<typeof InventoryChoiceFields>>;

/** A player's inventory in a path: `account`, `current` or an inventory id. */
export const InventoryPath = Type.Object(
  { playerId: Id('a player id, or `me` with a player token'), inventory: Id('`account`, `current` or an inventory id') },
  { additionalProperties: false },
);

/** GET /players/:playerId/ledger: optionally of one currency and/or one inventory. */
export const LedgerQuery = Type.Object(
  { currencyKey: Type.Optional(GameKey('only this currency')), inventoryId: Type.Optional(Id('only this inventory')), ...PageQuery },
  { additionalProperties: false },
);
export type LedgerQuery = Static<typeof LedgerQuery>;

/** POST /players/:playerId/currencies/:currencyKey/<kind>. */
export const CurrencyMovePath = Type.Object({ playerId: Id('a player id'), currencyKey: GameKey('a currency key') }, { additionalProperties: false });

const moveFields = {
  amount: Amount(),
  reason: GameKey(
    `a key naming the flow (\`quest_reward\`, \`shop\`); the engine's own reasons (${Object.values(ENGINE_REASONS)
      .map((r) => `\`${r}\``)
      .join(', ')}) are refused`,
  ),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'what the move is about, for the ledger' })),
  ...InventoryChoiceFields,
};
/** A credit, debit or refund: how much, why, and of which inventory. */
export const CurrencyMoveRequest = Type.Object(moveFields, { additionalProperties: false });
/** A consume: a move with the most the player may have spent in all after it. */
export const ConsumeRequest = Type.Object(
  { ...moveFields, allowance: Type.Integer({ minimum: 0, maximum: MAX_BALANCE, description: 'the most the player may have spent in all, after the move' }) },
  { additionalProperties: false },
);
/** What a currency move sends: a consume's request, or any other move's. */
export type MoveRequest = Static<typeof CurrencyMoveRequest> | Static<typeof ConsumeRequest>;
