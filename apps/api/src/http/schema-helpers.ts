import { Type, type TSchema, type StringOptions } from '@sinclair/typebox';

/** A string trimmed before validation (the spec's "trimmed"); length limits then count what is left. */
export function Trimmed(options: StringOptions = {}) {
  return Type.String({ ...options, 'x-trim': true });
}

/** Ids of players, sessions, items and the like: 1-64 characters (spec §4). */
export const Id = (description = 'an id') => Type.String({ minLength: 1, maxLength: 64, description });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'page size' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'the `next` of the previous page' })),
};

export function PageOf(item: TSchema, extra: Record<string, TSchema> = {}) {
  return Type.Object({ items: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]), ...extra }, { additionalProperties: false });
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
