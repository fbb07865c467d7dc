/**
 * Rules that span fields, written once as CEL on the schema node they concern (Kubernetes'
 * `x-kubernetes-validations`): the generated CRDs carry them, so the API server refuses a bad
 * document at `kubectl apply`, and validateManifest evaluates the very same expressions with
 * @bufbuild/cel (a CEL implementation conformant to the spec's tests), so `hearth apply` and the
 * operator refuse it with the same field and message. Keep rules to what both evaluators agree on:
 * `self`, field access, `has()`, comparisons and logic on strings, numbers and booleans.
 */
import type { TSchema } from '@sinclair/typebox';
import type * as Cel from '@bufbuild/cel';

export const RULES_KEYWORD = 'x-kubernetes-validations';

export interface CelRule {
  /** A CEL expression over `self` (the node) that must be true. */
  rule: string;
  /** Said after the field's name: `spec.publishAt is required for a scheduled post`. */
  message: string;
  /** Which field a refusal is about, relative to the node (`.publishAt`); the node itself when absent. */
  fieldPath?: string;
}

/** Schema options declaring rules on an object node: `Type.Object({...}, { ...celRules(...) })`. */
export function celRules(...rules: CelRule[]): { [RULES_KEYWORD]: CelRule[] } {
  return { [RULES_KEYWORD]: rules };
}

/** The rule of a list of keys that names each one once: `must name each ${what} once`. */
export function eachOnce(what: string): { [RULES_KEYWORD]: CelRule[] } {
  return celRules({ rule: 'self.all(k, self.exists_one(j, j == k))', message: `must name each ${what} once` });
}

type Evaluate = (bindings: { self: unknown }) => unknown;
const planned = new Map<string, Evaluate>();

/** @bufbuild/cel and its environment, loaded by the first rule evaluated: a command that validates no document (`hearth get`) never loads it. */
let loaded: { cel: typeof Cel; env: Cel.CelEnv } | undefined;
function celOf(): { cel: typeof Cel; env: Cel.CelEnv } {
  if (!loaded) {
    const cel = require('@bufbuild/cel') as typeof Cel;
    loaded = { cel, env: cel.celEnv() };
  }
  return loaded;
}

function evaluatorOf(rule: string): Evaluate {
  let evaluate = planned.get(rule);
  if (!evaluate) {
    const { cel, env } = celOf();
    evaluate = cel.plan(env, cel.parse(rule)) as unknown as Evaluate;
    planned.set(rule, evaluate);
  }
  return evaluate;
}

type JsonSchema = Record<string, any>;

/**
 * The first rule a schema-valid value breaks, as the field (dotted, under `path`) and the message;
 * null when it keeps them all. A rule that cannot be evaluated is a fault of the schema, so it throws.
 */
export function brokenRule(schema: JsonSchema, value: unknown, path: string): { field: string; reason: string } | null {
  for (const rule of (schema[RULES_KEYWORD] ?? []) as CelRule[]) {
    const result = evaluatorOf(rule.rule)({ self: value });
    if (celOf().cel.isCelError(result) || typeof result !== 'boolean')
      throw new Error(`CEL rule "${rule.rule}" at ${path} did not give a boolean: ${String(result)}`);
    if (!result) return { field: rule.fieldPath ? `${path}${rule.fieldPath}` : path, reason: rule.message };
  }
  if (value !== null && typeof value === 'object') {
    if (Array.isArray(value) && schema.items) {
      for (let i = 0; i < value.length; i++) {
        const broken = brokenRule(schema.items, value[i], `${path}.${i}`);
        if (broken) return broken;
      }
    } else if (schema.properties) {
      for (const [key, child] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
        if (!(key in (value as object))) continue;
        const broken = brokenRule(child, (value as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
        if (broken) return broken;
      }
    }
  }
  return null;
}

/** The keyword of a field that names an identity (`immutable`). */
export const IMMUTABLE_KEYWORD = 'x-hearth-immutable';

/** Why a field names an identity (the table of docs/manifests.md says it), and how it is changed on purpose where that is not deleting and creating the resource again. */
export interface IdentityNote {
  why: string;
  change?: string;
}

/**
 * Marks a `spec` field that names an identity (an environment's app key, a currency's key): set when
 * the document is created, never changed after. One declaration drives every check and the docs: the
 * CRDs carry a CEL transition rule (`self.f == oldSelf.f`) on the object holding it, so the API server
 * refuses an edit; reconcileManifest refuses a document whose field differs from what the database
 * holds for it (`hearth apply`); and docs/manifests.md's table of identity fields is written from the
 * marks and their notes (manifests/identity-fields.ts).
 */
export function immutable<T extends TSchema>(schema: T, note: IdentityNote): T {
  const description = `${schema.description ? `${schema.description}; ` : ''}immutable (${note.why})`;
  return { ...schema, description, [IMMUTABLE_KEYWORD]: note };
}

/** The message both refusals of an identity change give, after the field's name. */
export const IMMUTABLE_MESSAGE = 'is immutable: it names an identity; delete the resource and create it again to change it on purpose';

/** The refusal's message for a field with this note: how to change it, where the note says. */
export function immutableMessage(note: IdentityNote): string {
  return note.change ? `is immutable: it names an identity; ${note.change}` : IMMUTABLE_MESSAGE;
}

/** The fields of an object schema marked `immutable`, whether each is required, and their notes. */
export function immutableFields(schema: JsonSchema): { field: string; required: boolean; note: IdentityNote }[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)
    .filter(([, child]) => child[IMMUTABLE_KEYWORD] !== undefined)
    .map(([field, child]) => ({ field, required: required.has(field), note: child[IMMUTABLE_KEYWORD] as IdentityNote }));
}

/**
 * The CEL transition rules of an object's immutable fields, for its CRD: a required field keeps its
 * value; an optional one is neither added, removed nor changed (its default may stand for a value).
 */
export function immutableRules(schema: JsonSchema): CelRule[] {
  return immutableFields(schema).map(({ field, required, note }) => ({
    rule: required
      ? `self.${field} == oldSelf.${field}`
      : `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message: immutableMessage(note),
    fieldPath: `.${field}`,
  }));
}
