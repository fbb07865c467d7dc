import { closest, distance } from 'fastest-levenshtein';
import type { ErrorObject } from 'ajv';
import { compile, describe, fieldOf, firstError } from '../validation';
import { brokenRule } from '../contract/rules';
import { type AnyManifest, MANIFEST_KINDS, type ManifestKind } from './schemas';
import { ManifestError, describeDocument } from './manifest-error';

/**
 * Checks a document against its kind's schema, then against the CEL rules declared on it (rules.ts,
 * the ones the CRDs give the API server); the message names the document, the field and the reason.
 */
export function validateManifest(doc: unknown, origin?: string): AnyManifest {
  const label = describeDocument(doc, origin);
  const kind = (doc as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !(kind in MANIFEST_KINDS)) {
    throw new ManifestError(label, 'kind', `must be one of ${Object.keys(MANIFEST_KINDS).join(', ')}`);
  }
  const validate = compile(MANIFEST_KINDS[kind as ManifestKind].schema);
  if (!validate(doc)) {
    const { field, reason } = reasonOf(firstError(validate), validate.errors ?? [], MANIFEST_KINDS[kind as ManifestKind].schema);
    throw new ManifestError(label, field, reason);
  }
  const broken = brokenRule(MANIFEST_KINDS[kind as ManifestKind].schema, doc, '');
  if (broken) throw new ManifestError(label, broken.field, broken.reason);
  return doc as AnyManifest;
}

/** The first failure, with a union's choices spelled out (ajv alone says "must be equal to constant"). */
function reasonOf(first: ErrorObject, errors: ErrorObject[], root: object): { field: string; reason: string } {
  const field = fieldOf(first, '');
  if (errors.some((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath)) {
    const choices = errors
      .filter((e) => e.instancePath === first.instancePath && (e.keyword === 'const' || e.keyword === 'type'))
      .map((e) => (e.keyword === 'const' ? JSON.stringify(e.params.allowedValue) : String(e.params.type)));
    if (choices.length > 0) return { field, reason: `must be one of ${[...new Set(choices)].join(', ')}` };
  }
  if (first.keyword === 'const') return { field, reason: `must be ${JSON.stringify(first.params.allowedValue)}` };
  if (first.keyword === 'additionalProperties') {
    const near = nearestField(String(first.params.additionalProperty), Object.keys(schemaAt(root, first.schemaPath)?.properties ?? {}));
    if (near) return { field, reason: `${describe(first)} (did you mean ${near}?)` };
  }
  return { field, reason: describe(first) };
}

/** The object schema an error's keyword sits in (`#/properties/spec/additionalProperties` → the spec's schema). */
function schemaAt(root: object, schemaPath: string): { properties?: object } | undefined {
  const steps = schemaPath
    .split('/')
    .slice(1, -1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (const step of steps) node = (node as Record<string, unknown> | undefined)?.[step];
  return node as { properties?: object } | undefined;
}

/** The known field a mistyped one most likely meant: the closest by edit distance, if close enough to be a typo. */
export function nearestField(typed: string, known: string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = closest(
    typed.toLowerCase(),
    known.map((k) => k.toLowerCase()),
  );
  const index = known.findIndex((k) => k.toLowerCase() === best);
  // A third of the word (at least 2 edits: `perDecklimit`, `perDeckLimt`), no more: `colour` suggests nothing for a tour.
  return distance(typed.toLowerCase(), best) <= Math.max(2, Math.floor(typed.length / 3)) ? known[index] : undefined;
}
