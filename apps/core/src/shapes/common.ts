/**
 * The building blocks of the answer shapes. A shape is a TypeBox schema with a `$id`: the core's type
 * of it is its `Static<>`, the route table answers it, and the OpenAPI document names it once under
 * `components/schemas` by that `$id` (apps/api/src/http/openapi.ts), every other use a `$ref`.
 *
 * This module is a low layer: it imports no domain area and no manifest.
 */
import { Type, type Static, type TLiteral, type TSchema, type TProperties, type TUnion, type ObjectOptions, type StringOptions } from '@sinclair/typebox';

/** An answer object named `name` in the document: exact (no field beyond those declared). */
export function Shape<T extends TProperties>(name: string, properties: T, options: ObjectOptions = {}) {
  return Type.Object(properties, { ...options, $id: name, additionalProperties: false });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });

export const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options);

/**
 * A stored figure (a balance, a stack's quantity, what a consumed currency has spent): exact, never
 * past 2^53-1, the largest integer every JSON reader keeps exactly (docs/economy.md).
 */
export const Figure = (description?: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...(description ? { description } : {}) });

/** A signed change to a stored figure. */
export const Change = (description = 'the signed change to the stored figure') =>
  Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description });

/** One of a fixed list of strings. */
export const OneOf = <T extends string>(values: readonly T[], options: { default?: T; description?: string } = {}) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnion<TLiteral<T>[]>;

// The building blocks of requests: paths, pages and the trimmed strings of bodies.

/** A string trimmed before validation (the spec's "trimmed"); length limits then count what is left. */
export function Trimmed(options: StringOptions = {}) {
  return Type.String({ ...options, 'x-trim': true });
}

/** Ids of players, sessions, items and the like: 1-64 characters (spec §4). */
export const Id = (description = 'an id') => Type.String({ minLength: 1, maxLength: 64, description });

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
/** What a service takes to read one page. */
export type PageRequest = Static<typeof PageOnlyQuery>;

/** A page of `item`s; a page of a named shape is named after it (`BalancePage`) in the document. */
export function PageOf<T extends TSchema, E extends TProperties = Record<never, TSchema>>(item: T, extra: E = {} as E) {
  const name = typeof item.$id === 'string' ? { $id: `${item.$id}Page` } : {};
  const page = { items: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]) };
  return Type.Object({ ...page, ...extra } as typeof page & E, { ...name, additionalProperties: false });
}
