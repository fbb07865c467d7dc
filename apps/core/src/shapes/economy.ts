import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Change, Figure, Nullable, OneOf, Shape, Timestamp } from './common';
import { GAME_KEY_PATTERN, MAX_BALANCE } from '../contract/game-keys';

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
