import { type TSchema, Type } from '@sinclair/typebox';
import { eachOnce } from './rules';

/** One of a few words: a union of string literals (a CRD `enum`), optionally with its default. */
export const literals = <T extends string>(values: readonly T[], options: { default?: NoInfer<T>; description?: string } = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

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

/** A name players see. */
export const ShownName = () => Type.String({ minLength: 1, maxLength: 200, description: 'shown to players' });

/** A description players see: empty when the document gives none. */
export const ShownDescription = () => Defaulted(Type.String({ maxLength: 2000, default: '', description: 'shown to players' }));

/** An icon players see, as the game finds it. */
export const Icon = () => Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'an image address or an asset name of the game' }));

/** A list of keys a document may leave out (empty then), each named once (`must name each ${what} once`). */
export const KeyList = <K extends TSchema>(key: K, what: string, list: { maxItems: number; description: string }) =>
  Defaulted(Type.Array(key, { maxItems: list.maxItems, default: [], description: list.description, ...eachOnce(what) }));
