/**
 * A value a JSON schema takes, made from the schema alone: the tests that walk the route table or the
 * OpenAPI document (test/api/openapi, test/security/api8) send it where a request needs one.
 */
type Json = Record<string, any>;

const STRING_CANDIDATES = ['sample', 's', 'a1', 'abc-1', 'x.y', 'Sample', 'sample_1', '1.0.0'];

/**
 * The schema's first option (a non-null one where it offers null), its least number, a short string
 * that fits its length and pattern, and for objects their required properties only. `stringFor` may
 * answer a string property by its name first (a real player id, an app key).
 */
export function sampleOf(schema: Json, stringFor: (name: string) => string | undefined = () => undefined, name = ''): unknown {
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return sampleOf(branches.find((b) => b.type !== 'null') ?? branches[0], stringFor, name);
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(((schema.required ?? []) as string[]).map((n) => [n, sampleOf(schema.properties[n], stringFor, n)]));
    case 'string': {
      const named = stringFor(name);
      if (named !== undefined) return named;
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      const min = schema.minLength ?? 1;
      const fits = (s: string) =>
        s.length >= min && (schema.maxLength === undefined || s.length <= schema.maxLength) && (!schema.pattern || new RegExp(schema.pattern, 'u').test(s));
      return STRING_CANDIDATES.find(fits) ?? 's'.repeat(min);
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    default:
      return 'sample';
  }
}
