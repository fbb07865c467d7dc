import { type TSchema, Type } from '@sinclair/typebox';

/** One of a few words: a union of string literals (a CRD `enum`), optionally with its default. */
export const literals = <T extends string>(values: readonly T[], options: { default?: NoInfer<T>; description?: string } = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)), options);

/**
 * A field a document may leave out and validation then fills with the schema's `default`: ajv's
 * `useDefaults` in `hearth apply` and the operator, the CRD's `default` in the cluster (both from this
 * one declaration). Optional in the JSON Schema, present in the static type of a validated document,
 * so code reading one never writes the default a second time (`x ?? default`).
 */
export function Defaulted<T extends TSchema>(schema: T): T {
  if (schema.default === undefined) throw new Error('Defaulted: the schema declares no default');
  return Type.Optional(schema) as unknown as T;
}
