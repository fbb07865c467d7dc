/**
 * JSON with every object's keys sorted: the same value serialises the same way whatever order its
 * keys came in (a client re-serialising a retry, PostgreSQL's jsonb handing objects back).
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, (v as Record<string, unknown>)[k]]),
          )
        : v,
    ) ?? 'null'
  );
}

/** Equal as JSON whatever the key order (jsonb hands objects back with its own key order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
