/**
 * The building blocks of the answer shapes. A shape is a TypeBox schema with a `$id`: the core's type
 * of it is its `Static<>`, the route table answers it, and the OpenAPI document names it once under
 * `components/schemas` by that `$id` (apps/api/src/http/openapi.ts), every other use a `$ref`.
 *
 * This module is a low layer: it imports no domain area and no manifest.
 */
import { Type, type TLiteral, type TSchema, type TProperties, type TUnion, type ObjectOptions } from '@sinclair/typebox';

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
export const Figure = (description?: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...(description ? { description } : {}) });

/** A signed change to a stored figure. */
export const Change = (description = 'the signed change to the stored figure') =>
  Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description });

/** One of a fixed list of strings. */
export const OneOf = <T extends string>(values: readonly T[], options: { default?: T; description?: string } = {}) =>
  Type.Union(values.map((value) => Type.Literal(value)), options) as unknown as TUnion<TLiteral<T>[]>;
