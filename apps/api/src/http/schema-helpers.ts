import { Type, type TSchema, type StringOptions } from '@sinclair/typebox';

/** A string trimmed before validation (the spec's "trimmed"); length limits then count what is left. */
export function Trimmed(options: StringOptions = {}) {
  return Type.String({ ...options, 'x-trim': true });
}

/** Ids of players, sessions, items and the like: 1-64 characters (spec §4). */
export const Id = (description = 'an id') => Type.String({ minLength: 1, maxLength: 64, description });

import { GAME_KEY_PATTERN, MAX_BALANCE, Movement } from '@hearth/core';

export { Timestamp } from '@hearth/core';

/** The path of a player's routes that either credential calls: a server names the player, a player says `me`. */
export const PlayerPath = Type.Object({ playerId: Id('a player id, or `me` with a player token') }, { additionalProperties: false });
/** The path of a player's routes that only a server calls. */
export const ServerPlayerPath = Type.Object({ playerId: Id('a player id') }, { additionalProperties: false });

/** Where a body puts or takes something (spec "Choosing an inventory"): an inventory, or a realm's (null: the account's). */
export const InventoryChoiceFields = {
  inventoryId: Type.Optional(Id('one of the player’s inventories')),
  realmId: Type.Optional(Type.Union([Id('a realm id'), Type.Null()], { description: 'a realm id, or null for the account' })),
};

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'page size' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'the `next` of the previous page' })),
};

/** The query of a list that takes nothing but its page. */
export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });

/** A page of `item`s; a page of a named shape is named after it (`BalancePage`) in the document. */
export function PageOf(item: TSchema, extra: Record<string, TSchema> = {}) {
  const name = typeof item.$id === 'string' ? { $id: `${item.$id}Page` } : {};
  return Type.Object({ items: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]), ...extra }, { ...name, additionalProperties: false });
}

/** Trims, in place, every string the schema marks `x-trim` (nested objects and arrays included). */
export function applyTrim(schema: TSchema | undefined, value: unknown): unknown {
  if (!schema || value === null || value === undefined) return value;
  const s = schema as Record<string, unknown>;
  if (s['x-trim'] === true && typeof value === 'string') return value.trim();
  if (Array.isArray(value) && s.items) return value.map((v) => applyTrim(s.items as TSchema, v));
  if (typeof value === 'object' && !Array.isArray(value) && s.properties) {
    const props = s.properties as Record<string, TSchema>;
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) if (props[key]) obj[key] = applyTrim(props[key], obj[key]);
  }
  if (Array.isArray(s.anyOf)) {
    for (const option of s.anyOf as TSchema[]) value = applyTrim(option, value);
  }
  return value;
}

/** Whether a schema needs trimming at all, so routes without trimmed fields skip the walk. */
export function hasTrim(schema: TSchema | undefined): boolean {
  return schema !== undefined && JSON.stringify(schema).includes('"x-trim":true');
}

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
export const Purchase = (granted: TSchema) =>
  Type.Object(
    {
      replayed: Type.Boolean({ description: 'true when the Idempotency-Key named a purchase already made' }),
      charges: Type.Array(Movement, { description: 'one Movement per currency charged, in currency-key order' }),
      granted: Type.Union([granted, Type.Null()], { description: 'what was granted; null when replayed' }),
    },
    { additionalProperties: false },
  );
