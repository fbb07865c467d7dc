import type { TSchema } from '@sinclair/typebox';

// The request building blocks (Id, PageOf, PlayerPath, Allowances…) are core's shapes: routes import
// them from @hearth/core/shapes. Here is only the pipeline's trimming of what they mark `x-trim`.

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
