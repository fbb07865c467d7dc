/**
 * Which fields of each kind's spec are required, as one table (docs/manifests.md "Fields of each
 * kind"), read from the kinds' TypeBox schemas, the same ones `hearth apply`, the operator and the
 * CRDs validate with: a field is required exactly when the schema requires it, and a default is the
 * schema's. `make crds` writes the table into the docs beside the identity fields; a test fails while
 * they differ.
 */
import type { TSchema } from '@sinclair/typebox';
import { MANIFEST_KINDS, type ManifestKind } from './schemas';

type Schema = TSchema & {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  default?: unknown;
};

/** The object schemas a schema is or unions (a Union of objects lists each member's fields). */
function objectsOf(schema: Schema): Schema[] {
  if (schema.properties) return [schema];
  return (schema.anyOf ?? []).flatMap(objectsOf);
}

/** `a, b? = 1, c[] { d }`: each field of an object (of every member of a union), as fieldOf writes it. */
function fieldsOf(schema: Schema): string {
  const seen = new Map<string, string>();
  for (const object of objectsOf(schema)) {
    for (const [name, field] of Object.entries(object.properties ?? {})) {
      if (seen.has(name)) continue;
      seen.set(name, fieldOf(name, field, (object.required ?? []).includes(name)));
    }
  }
  return [...seen.values()].join(', ');
}

/** `prices[]? { currencyKey, amount } = []`: the name, `[]` for a list, `?` when optional, what it holds, its default. */
function fieldOf(name: string, field: Schema, required: boolean): string {
  const inner = field.type === 'array' && field.items ? field.items : field;
  const inside = objectsOf(inner).length > 0 ? fieldsOf(inner) : '';
  const nested = inside ? ` { ${inside} }` : '';
  const byDefault = field.default !== undefined ? ` = ${JSON.stringify(field.default)}` : '';
  return `${name}${inner !== field ? '[]' : ''}${required ? '' : '?'}${nested}${byDefault}`;
}

/** The Markdown table of every kind's spec fields (docs/manifests.md). */
export function specFieldsTable(): string {
  const lines = ['| kind | spec fields |', '|---|---|'];
  for (const kind of Object.keys(MANIFEST_KINDS) as ManifestKind[]) {
    const spec = (MANIFEST_KINDS[kind].schema as unknown as { properties: { spec: Schema } }).properties.spec;
    lines.push(`| \`${kind}\` | \`${fieldsOf(spec).replaceAll('|', '\\|')}\` |`);
  }
  return lines.join('\n');
}
